// Network worker: whether one audio DataChannel is congested, from how long the oldest byte still
// queued on it has waited: the channel's bufferedAmount against our own record of when we handed
// each packet over. Every packet on the channel goes through `send` here, audio and control alike:
// bufferedAmount counts them all, so a control packet left out of the record made the backlog read
// as old as the last audio packet (see `send`). A queue measured in packets misjudges a bursty
// sender: capture buffers of 1024 frames leave as 8 packets at once, so a count threshold either
// fires on every burst whose bufferedAmount update is still in flight or lets a real backlog grow.
// Age is what decides whether a frame could still play in time. And an age read in the same task
// as a burst is not trusted alone (see `congested`). Allocation-free per packet: a fixed ring.

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

/** How long after a first reading over the bound the second look comes (3 quanta). */
export const LOOK_AGAIN_MS = 3 * QUANTUM_MS;

/**
 * How long looks wait for a first byte reported sent while we hand packets over, counted from the
 * first look that finds packets handed over since the first reading, before a backlog over the
 * bound counts as congestion anyway (`lookAgain`). The reports can lag well past one look
 * after this machine stalled: holding every renderer thread but the worker on one core left the
 * network thread starved up to 85 ms after the hold began (no byte sent while the worker handed
 * over six; PROTOCOL.md §3.1). Until 2026-11-29 a look counted our own packets handed over as
 * movement, so one 8 ms after the capture's backlog went out confirmed on reports that had not
 * come yet: 12 frames dropped in one of three clean-clone runs of tests/e2e/stall.spec.ts. Counted
 * from the first reading instead, a stall of this machine longer than this between the reading and
 * its look (the look and the capture's backlog both wait for the thread) confirmed at the first
 * look after it, on reports that had not come yet. The cost on a link that takes nothing: up to
 * this much more audio queued (and one look), once a second at most.
 */
export const NO_DRAIN_MS = 100;

/** How long a second look's finding of congestion stands without another look. */
const CONFIRMED_FOR_MS = 1000;

/** Something queued on the channel: its `bufferedAmount` and a way to hand it bytes. */
export interface QueuedChannel {
  readonly bufferedAmount: number;
  send(data: ArrayBuffer | Uint8Array<ArrayBuffer>): void;
}

export class SendQueue {
  private readonly at = new Float64Array(HISTORY);
  /** Bytes handed to the channel up to and including that send. */
  private readonly upTo = new Float64Array(HISTORY);
  private next = 0;
  private count = 0;
  private sent = 0;
  /** When a second look last found the channel congested (performance.now() ms). */
  private confirmedMs = -Infinity;
  /** A second look is scheduled (one at a time). */
  private looking = false;
  private channel: QueuedChannel | null = null;
  private lookMaxMs = MAX_QUEUE_MS;
  /** At the first reading: bytes the channel had reported sent, and packets we had handed over. */
  private lookDrained = 0;
  private lookSends = 0;
  /** When the first reading of this episode came (looks stop after CONFIRMED_FOR_MS of nothing moving). */
  private lookFromMs = 0;
  /** When a look of this episode first found packets handed over and no byte reported sent (NaN: none yet). */
  private handedFromMs = NaN;
  /** Packets handed over since the start. */
  private sends = 0;

  /**
   * `later` runs a function LOOK_AGAIN_MS later, in another task of this thread; `clock` is the
   * time the callers pass as `nowMs` (the unit tests step both).
   */
  constructor(
    private readonly later: (fn: () => void) => void = (fn) => setTimeout(fn, LOOK_AGAIN_MS),
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /**
   * Whether to drop the frame about to be sent on `channel` at `nowMs` rather than queue it: its
   * oldest queued byte has waited longer than `maxMs`, and a second look, from another task,
   * found the same within the last CONFIRMED_FOR_MS. bufferedAmount falls only when the channel's
   * "sent" reports reach this thread, as tasks: within one task it cannot fall at all, and right
   * after this machine stalled the reports lag behind what its network thread is sending. With
   * the renderer's audio and network threads held 40 ms and this worker not (tests/e2e/
   * stall.spec.ts), the capture's backlog arrives as one burst while the bytes queued before the
   * stall are going out that moment; every frame of the burst read as behind a backlog older than
   * the bound, and the sender dropped 15–31 frames in eight such stalls on a quiet loopback. So a first
   * reading over the bound sends the frame and looks again LOOK_AGAIN_MS later; frames drop only
   * once a look agrees, and a look that finds no byte reported sent looks again (`lookAgain`). On
   * a congested link that lets the frames of those 8 ms through (of up to NO_DRAIN_MS where the
   * link takes nothing), once a second at most.
   */
  congested(channel: QueuedChannel, nowMs: number, maxMs: number = MAX_QUEUE_MS): boolean {
    if (this.ageMs(nowMs, channel.bufferedAmount) <= maxMs) return false;
    if (nowMs - this.confirmedMs < CONFIRMED_FOR_MS) return true;
    if (!this.looking) {
      this.looking = true;
      this.channel = channel;
      this.lookMaxMs = maxMs;
      this.lookDrained = this.sent - channel.bufferedAmount;
      this.lookSends = this.sends;
      this.lookFromMs = nowMs;
      this.handedFromMs = NaN;
      this.later(this.lookAgain);
    }
    return false;
  }

  private readonly lookAgain = (): void => {
    this.looking = false;
    const ch = this.channel;
    if (ch === null) return;
    const now = this.clock();
    if (this.ageMs(now, ch.bufferedAmount) <= this.lookMaxMs) return;
    // No byte reported sent since the first reading: the reports may still lag behind what this
    // machine's network thread is sending, so the reading proves nothing yet. Look again:
    // - while we handed nothing over either, for up to CONFIRMED_FOR_MS (this machine is still
    //   stalled; a channel that closed meanwhile never moves again, and the next reading over the
    //   bound starts a new episode anyway);
    // - while we did (the capture's backlog after a stall goes out in the first reading's task),
    //   for up to NO_DRAIN_MS from the first look that saw it (a look that itself waited out a
    //   stall comes with the backlog, before its reports); a link that takes nothing for that long
    //   while we send is congested.
    if (this.sent - ch.bufferedAmount === this.lookDrained) {
      const handedOver = this.sends > this.lookSends + 1;
      if (handedOver && Number.isNaN(this.handedFromMs)) this.handedFromMs = now;
      const waited = handedOver ? now - this.handedFromMs : now - this.lookFromMs;
      if (waited < (handedOver ? NO_DRAIN_MS : CONFIRMED_FOR_MS)) {
        this.looking = true;
        this.later(this.lookAgain);
        return;
      }
      if (!handedOver) return;
    }
    this.confirmedMs = now;
  };

  /**
   * Hand `bytes` to `channel` at `nowMs` and record them. Any packet sent on the channel without
   * this (a clock reply, a ping's answer, a one-way report) would still count in its
   * bufferedAmount: then the oldest queued byte was taken to be the last audio packet, and after a
   * capture buffer 21 ms late (a 42.7 ms gap between audio sends, every ~20 s on a real device) a
   * 16-byte clock request not yet reported sent read as a 43 ms backlog, and the sender dropped the
   * whole next burst as congested on a quiet loopback (issue 9).
   */
  send(channel: Pick<QueuedChannel, 'send'>, bytes: ArrayBuffer | Uint8Array<ArrayBuffer>, nowMs: number): void {
    channel.send(bytes);
    this.record(nowMs, bytes.byteLength);
  }

  /** We just handed `bytes` to the channel at `nowMs` (`send` does this; alone, for a packet sent later). */
  record(nowMs: number, bytes: number): void {
    this.sent += bytes;
    this.sends++;
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
