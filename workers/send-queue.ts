// Network worker: how long the oldest byte still queued on one audio DataChannel has waited, from
// the channel's bufferedAmount and our own record of when we handed each packet over. Every packet
// on the channel goes through `send` here, audio and control alike: bufferedAmount counts them all,
// so a control packet left out of the record made the backlog read as old as the last audio packet
// (see `send`). A queue
// measured in packets misjudges a bursty sender: capture buffers of 1024 frames leave as 8 packets
// at once, so a count threshold either fires on every burst whose bufferedAmount update is still in
// flight or lets a real backlog grow for bursts on end. Age is what decides whether a frame could
// still play in time. Allocation-free: a fixed ring, written per packet sent.

import { QUANTUM_MS } from '../src/shared/constants.ts';

/**
 * A channel whose oldest queued byte has waited longer than this (16 quanta of audio) is
 * congested: the network worker drops the frame at the sender rather than queue it, because behind
 * that queue it would arrive too late to play and delay every frame after it. (Measured on the
 * impaired TURN path as a 16-packet queue: 8 dropped a quarter more frames, with the same latency.)
 * The bench's main-thread baseline applies the same rule.
 */
export const MAX_QUEUE_MS = 16 * QUANTUM_MS;

/** Sends remembered (~340 ms at 375 packets/s); an older backlog reads as at least that old. */
const HISTORY = 128;

export class SendQueue {
  private readonly at = new Float64Array(HISTORY);
  /** Bytes handed to the channel up to and including that send. */
  private readonly upTo = new Float64Array(HISTORY);
  private next = 0;
  private count = 0;
  private sent = 0;

  /**
   * Hand `bytes` to `channel` at `nowMs` and record them. Any packet sent on the channel without
   * this (a clock reply, a ping's answer, a one-way report) would still count in its
   * bufferedAmount: then the oldest queued byte was taken to be the last audio packet, and after a
   * capture buffer 21 ms late (a 42.7 ms gap between audio sends, every ~20 s on a real device) a
   * 16-byte clock request not yet reported sent read as a 43 ms backlog, and the sender dropped the
   * whole next burst as congested on a quiet loopback (issue 9).
   */
  send(channel: { send(data: ArrayBuffer | Uint8Array<ArrayBuffer>): void }, bytes: ArrayBuffer | Uint8Array<ArrayBuffer>, nowMs: number): void {
    channel.send(bytes);
    this.record(nowMs, bytes.byteLength);
  }

  /** We just handed `bytes` to the channel at `nowMs` (`send` does this; alone, for a packet sent later). */
  record(nowMs: number, bytes: number): void {
    this.sent += bytes;
    this.at[this.next] = nowMs;
    this.upTo[this.next] = this.sent;
    this.next = (this.next + 1) % HISTORY;
    if (this.count < HISTORY) this.count++;
  }

  /** Age in ms of the oldest byte still queued, given the channel's `bufferedAmount` (0 when empty). */
  ageMs(nowMs: number, bufferedAmount: number): number {
    if (bufferedAmount <= 0 || this.count === 0) return 0;
    // The oldest queued byte is byte number sent − bufferedAmount (0-based); find the send that
    // carried it: the oldest record whose running total exceeds that number.
    const oldest = this.sent - bufferedAmount;
    let i = (this.next - 1 + HISTORY) % HISTORY;
    let when = this.at[i]!;
    for (let k = 0; k < this.count; k++) {
      if (this.upTo[i]! <= oldest) return nowMs - when;
      when = this.at[i]!;
      i = (i - 1 + HISTORY) % HISTORY;
    }
    // Older than everything remembered.
    return nowMs - this.at[(this.next - this.count + HISTORY) % HISTORY]!;
  }
}
