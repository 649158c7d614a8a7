// Network worker, outgoing: one encoding of our captured stream (PCM16 or PCM24). It owns a packet
// buffer, the redundant copies that format carries (RedundancyHistory) and a view of the buffer for
// every length a packet can have, made once: encoding and handing a peer a packet with fewer
// copies allocate nothing. The sender keeps one per format and encodes each quantum in every
// format some peer needs (a PCM24 sender still sends PCM16 to a peer whose app predates it).

import { MAX_REDUNDANCY } from '../src/shared/constants.ts';
import { FLAG, HEADER, MAX_PACKET_BYTES, RedundancyHistory, encodePacket, packetBytes, type SampleFormat } from '../src/shared/wire.ts';

export class StreamEncoder {
  readonly packet = new Uint8Array(new ArrayBuffer(MAX_PACKET_BYTES));
  readonly history = new RedundancyHistory();
  /** The last encode(): its length (the full packet), channel count, flags byte and copies carried. */
  length = 0;
  channels: 1 | 2 = 2;
  flags = 0;
  copies = 0;
  /** Whether the last quantum was encoded in this format (a skipped quantum breaks the copies' run). */
  private fresh = false;
  private readonly view = new DataView(this.packet.buffer);
  /** `packet` cut to each length encodePacket can return (silent; mono or stereo with 0..3 copies). */
  private readonly ofLength: Map<number, Uint8Array<ArrayBuffer>>;

  constructor(readonly format: SampleFormat) {
    const lengths = [packetBytes(1, true)];
    for (let r = 0; r <= MAX_REDUNDANCY; r++) lengths.push(packetBytes(1, false, r, format), packetBytes(2, false, r, format));
    this.ofLength = new Map(lengths.map((n) => [n, this.packet.subarray(0, n)]));
  }

  /** Encode the quantum in `frame` (the stereo bus) with up to `history.frames` copies. */
  encode(frame: Float32Array, channels: 1 | 2, streamId: number, seq: number, captureUs: number): void {
    if (!this.fresh || channels !== this.channels) this.history.reset();
    this.length = encodePacket(this.packet, this.view, frame, channels, streamId, seq, captureUs, this.history, this.format);
    this.channels = channels;
    this.flags = this.packet[HEADER.FLAGS]!;
    this.copies = (this.flags & FLAG.REDUNDANCY_MASK) >> FLAG.REDUNDANCY_SHIFT;
    this.fresh = true;
  }

  /** This quantum was not encoded in this format: the copies held are no longer the previous quanta. */
  skip(): void {
    this.fresh = false;
  }

  /**
   * The packet with at most `copies` copies: the same header with fewer copies announced, the
   * current quantum and the newest copies. Call restore() after sending it.
   */
  withCopies(copies: number): Uint8Array<ArrayBuffer> {
    if (copies >= this.copies) return this.ofLength.get(this.length)!;
    this.packet[HEADER.FLAGS] = (this.flags & ~FLAG.REDUNDANCY_MASK) | (copies << FLAG.REDUNDANCY_SHIFT);
    return this.ofLength.get(packetBytes(this.channels, false, copies, this.format))!;
  }

  restore(): void {
    this.packet[HEADER.FLAGS] = this.flags;
  }
}
