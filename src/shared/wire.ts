// Tutti audio wire format v1: one packet = one 128-frame quantum, sent on an unordered,
// unreliable RTCDataChannel. Encoded and decoded in the network worker; see docs/PROTOCOL.md.
// Encode and decode write into caller-owned buffers: nothing here allocates per packet.
// (Over 300 lines on purpose: the format is defined in one place, header, flags, sizes, encoder,
// decoder, validation and control packets together, as PROTOCOL.md §1 describes it.)

import { BUS_CHANNELS, MAX_REDUNDANCY, QUANTUM_FRAMES } from './constants.ts';

/** Byte offsets of the 14-byte header (all multi-byte fields little-endian). */
export const HEADER = {
  MAGIC_VERSION: 0, // u8: high nibble magic 0xA, low nibble version
  FLAGS: 1, // u8: see FLAG
  STREAM_ID: 2, // u8: sender's stream id, new random value on every capture (re)start
  FORMAT_CHANNELS: 3, // u8: high nibble sample format, low nibble channel count
  FRAMES: 4, // u16: frames per packet
  SEQUENCE: 6, // u32: packet sequence number, wraps at 2^32
  CAPTURE_TIME: 10, // u32: sender wall clock in microseconds, modulo 2^32
  SIZE: 14,
} as const;

export const MAGIC = 0xa;
export const VERSION = 1;
export const MAGIC_VERSION_BYTE = (MAGIC << 4) | VERSION;

/** Flag bits. Bits not defined here must be zero in version 1. */
export const FLAG = {
  /** Every quantum the packet stands for is digital silence: no sample bytes follow the header. */
  SILENT: 0x01,
  /** A control packet (ping, pong, echo request): CONTROL layout below, not audio. */
  CONTROL: 0x02,
  /** An audio packet a peer sends back unchanged to its originator (peer loopback). */
  ECHOED: 0x04,
  /** Bits 4–5: how many previous frames (sequence − 1, − 2, …) follow the current one (0..3). */
  REDUNDANCY_MASK: 0x30,
  REDUNDANCY_SHIFT: 4,
} as const;
const KNOWN_FLAGS = FLAG.SILENT | FLAG.CONTROL | FLAG.ECHOED | FLAG.REDUNDANCY_MASK;

/** Control packets: [magic/version, FLAGS = CONTROL, kind, 0, id u32, time u32] = 12 bytes. */
export const CONTROL = {
  KIND: 2,
  ID: 4,
  TIME: 8,
  SIZE: 12,
} as const;
export const ControlKind = {
  /** Measure the channel's round trip: the peer answers PONG with the same id and time. */
  PING: 1,
  PONG: 2,
  /** Ask the peer to echo our audio packets back (ECHOED flag) until ECHO_OFF. */
  ECHO_ON: 3,
  ECHO_OFF: 4,
} as const;
export type ControlKind = (typeof ControlKind)[keyof typeof ControlKind];

/** Sample formats. Only PCM16 is produced and accepted in v1; the others have reserved codes. */
export const SampleFormat = {
  PCM16: 0,
  PCM24: 1,
  FLOAT32: 2,
} as const;
export type SampleFormat = (typeof SampleFormat)[keyof typeof SampleFormat];

export const BYTES_PER_SAMPLE: Record<SampleFormat, number> = { 0: 2, 1: 3, 2: 4 };

/** Why a packet was rejected; 0 means accepted. */
export const Reject = {
  OK: 0,
  TOO_SHORT: 1,
  BAD_MAGIC: 2,
  BAD_VERSION: 3,
  BAD_FLAGS: 4,
  BAD_FORMAT: 5,
  BAD_CHANNELS: 6,
  BAD_FRAMES: 7,
  BAD_LENGTH: 8,
  NOT_BINARY: 9,
  /** Accepted by the decoder but handling it threw: a bug of ours, counted instead of crashing. */
  INTERNAL: 10,
  /** A control packet of unknown kind or wrong length. */
  BAD_CONTROL: 11,
} as const;
export type Reject = (typeof Reject)[keyof typeof Reject];
export const REJECT_NAMES: Record<Reject, string> = {
  0: 'ok',
  1: 'too-short',
  2: 'bad-magic',
  3: 'bad-version',
  4: 'bad-flags',
  5: 'unsupported-format',
  6: 'bad-channels',
  7: 'bad-frames',
  8: 'bad-length',
  9: 'not-binary',
  10: 'internal-error',
  11: 'bad-control',
};

/** Largest packet v1 can produce: header + (1 + MAX_REDUNDANCY) stereo PCM16 quanta (2062 bytes). */
export const MAX_PACKET_BYTES = HEADER.SIZE + (1 + MAX_REDUNDANCY) * QUANTUM_FRAMES * BUS_CHANNELS * 2;

/** Decoded header fields; one instance is reused for every packet. */
export interface PacketHeader {
  flags: number;
  /** Previous frames carried after the current one (flags bits 4–5). */
  redundancy: number;
  /** For CONTROL packets: kind, id and time; 0 otherwise. */
  control: number;
  controlId: number;
  controlTime: number;
  streamId: number;
  format: SampleFormat;
  channels: number;
  frames: number;
  sequence: number;
  captureTimeUs: number;
}

export function newHeader(): PacketHeader {
  return { flags: 0, redundancy: 0, control: 0, controlId: 0, controlTime: 0, streamId: 0, format: SampleFormat.PCM16, channels: 2, frames: QUANTUM_FRAMES, sequence: 0, captureTimeUs: 0 };
}

/** Sample bytes of one PCM16 quantum. */
export function quantumBytes(channels: number): number {
  return QUANTUM_FRAMES * channels * 2;
}

/** Bytes of a PCM16 packet for `channels` carrying 1 + `redundancy` quanta, or of a header-only silent packet. */
export function packetBytes(channels: number, silent: boolean, redundancy = 0): number {
  return silent ? HEADER.SIZE : HEADER.SIZE + (1 + redundancy) * quantumBytes(channels);
}

/** Float sample to PCM16: clamp to full scale, round to nearest. Inverse of `x / 32768` exactly. */
export function floatToPcm16(x: number): number {
  const s = Math.round(x * 32768);
  return s > 32767 ? 32767 : s < -32768 ? -32768 : s;
}

/**
 * Encode one quantum. `src` is the internal stereo bus (interleaved, 256 samples);
 * with channels = 1 the two sides are averaged. Returns the packet length written to `out`.
 * `out` must hold MAX_PACKET_BYTES. A quantum whose every sample quantises to 0 is sent as
 * a header-only SILENT packet (bit-exact: the receiver rebuilds the same zeros).
 */
export function encodePacket(
  out: Uint8Array,
  view: DataView,
  src: Float32Array,
  channels: 1 | 2,
  streamId: number,
  sequence: number,
  captureTimeUs: number,
  redundancy?: RedundancyHistory,
): number {
  let nonZero = false;
  let o = HEADER.SIZE;
  if (channels === 2) {
    for (let i = 0; i < QUANTUM_FRAMES * 2; i++) {
      const s = floatToPcm16(src[i]!);
      if (s !== 0) nonZero = true;
      view.setInt16(o, s, true);
      o += 2;
    }
  } else {
    for (let f = 0; f < QUANTUM_FRAMES; f++) {
      const s = floatToPcm16((src[2 * f]! + src[2 * f + 1]!) * 0.5);
      if (s !== 0) nonZero = true;
      view.setInt16(o, s, true);
      o += 2;
    }
  }
  let extra = 0;
  if (redundancy) {
    extra = redundancy.append(out, o, channels, nonZero);
    o += extra * quantumBytes(channels);
  }
  const silent = !nonZero && extra === 0;
  out[HEADER.MAGIC_VERSION] = MAGIC_VERSION_BYTE;
  out[HEADER.FLAGS] = (silent ? FLAG.SILENT : 0) | (extra << FLAG.REDUNDANCY_SHIFT);
  out[HEADER.STREAM_ID] = streamId & 0xff;
  out[HEADER.FORMAT_CHANNELS] = (SampleFormat.PCM16 << 4) | channels;
  view.setUint16(HEADER.FRAMES, QUANTUM_FRAMES, true);
  view.setUint32(HEADER.SEQUENCE, sequence >>> 0, true);
  view.setUint32(HEADER.CAPTURE_TIME, captureTimeUs >>> 0, true);
  return silent ? HEADER.SIZE : o;
}

/**
 * The sender's last MAX_REDUNDANCY encoded quanta (PCM16 bytes), appended after the current one.
 * Preallocated; append() allocates nothing. A quantum whose copies would all be silence is sent
 * header-only as before, so a muted sender still sends 14-byte packets.
 */
export class RedundancyHistory {
  /** Frames to carry (0..MAX_REDUNDANCY). */
  frames = 0;
  private readonly bytes = new Uint8Array(MAX_REDUNDANCY * QUANTUM_FRAMES * BUS_CHANNELS * 2);
  private readonly nonZero = new Uint8Array(MAX_REDUNDANCY);
  private readonly channels = new Uint8Array(MAX_REDUNDANCY);
  /** History entries valid (a channel-count change or a restart empties it). */
  private count = 0;

  /**
   * Append up to `frames` previous quanta after the current one (already at out[HEADER.SIZE, end)),
   * then push the current one into the history. Returns how many were appended.
   */
  append(out: Uint8Array, end: number, channels: number, currentNonZero: boolean): number {
    const qb = quantumBytes(channels);
    let n = 0;
    let anyNonZero = currentNonZero;
    const want = Math.min(this.frames, this.count);
    for (let k = 0; k < want; k++) {
      if (this.channels[k] !== channels) break;
      if (this.nonZero[k]) anyNonZero = true;
      n++;
    }
    if (anyNonZero) {
      for (let k = 0; k < n; k++) {
        const src = k * QUANTUM_FRAMES * BUS_CHANNELS * 2;
        const dst = end + k * qb;
        for (let b = 0; b < qb; b++) out[dst + b] = this.bytes[src + b]!;
      }
    } else {
      n = 0;
    }
    // Shift the history by one (newest first) and store the current quantum at index 0.
    const slot = QUANTUM_FRAMES * BUS_CHANNELS * 2;
    for (let k = MAX_REDUNDANCY - 1; k > 0; k--) {
      this.bytes.copyWithin(k * slot, (k - 1) * slot, (k - 1) * slot + slot);
      this.nonZero[k] = this.nonZero[k - 1]!;
      this.channels[k] = this.channels[k - 1]!;
    }
    for (let b = 0; b < qb; b++) this.bytes[b] = currentNonZero ? out[HEADER.SIZE + b]! : 0;
    this.nonZero[0] = currentNonZero ? 1 : 0;
    this.channels[0] = channels;
    if (this.count < MAX_REDUNDANCY) this.count++;
    return n;
  }

  reset(): void {
    this.count = 0;
  }
}

/** Encode a control packet into `out` (≥ CONTROL.SIZE bytes); returns its length. */
export function encodeControl(view: DataView, kind: ControlKind, id: number, time: number): number {
  view.setUint8(HEADER.MAGIC_VERSION, MAGIC_VERSION_BYTE);
  view.setUint8(HEADER.FLAGS, FLAG.CONTROL);
  view.setUint8(CONTROL.KIND, kind);
  view.setUint8(3, 0);
  view.setUint32(CONTROL.ID, id >>> 0, true);
  view.setUint32(CONTROL.TIME, time >>> 0, true);
  return CONTROL.SIZE;
}

/**
 * Validate and parse the header of `view` (the whole packet) into `h`.
 * Checks every field and the exact length; never throws.
 */
export function decodeHeader(view: DataView, h: PacketHeader): Reject {
  const len = view.byteLength;
  if (len < 2 || (len < HEADER.SIZE && len !== CONTROL.SIZE)) return Reject.TOO_SHORT;
  const mv = view.getUint8(HEADER.MAGIC_VERSION);
  if (mv >> 4 !== MAGIC) return Reject.BAD_MAGIC;
  if ((mv & 0x0f) !== VERSION) return Reject.BAD_VERSION;
  const flags = view.getUint8(HEADER.FLAGS);
  if (len < HEADER.SIZE && (flags & FLAG.CONTROL) === 0) return Reject.TOO_SHORT;
  if ((flags & ~KNOWN_FLAGS) !== 0) return Reject.BAD_FLAGS;
  if ((flags & FLAG.CONTROL) !== 0) {
    if (flags !== FLAG.CONTROL) return Reject.BAD_FLAGS;
    if (len !== CONTROL.SIZE) return Reject.BAD_CONTROL;
    const kind = view.getUint8(CONTROL.KIND);
    if (kind < ControlKind.PING || kind > ControlKind.ECHO_OFF || view.getUint8(3) !== 0) return Reject.BAD_CONTROL;
    h.flags = flags;
    h.control = kind;
    h.controlId = view.getUint32(CONTROL.ID, true);
    h.controlTime = view.getUint32(CONTROL.TIME, true);
    h.redundancy = 0;
    return Reject.OK;
  }
  const fc = view.getUint8(HEADER.FORMAT_CHANNELS);
  const format = fc >> 4;
  if (format !== SampleFormat.PCM16) return Reject.BAD_FORMAT;
  const channels = fc & 0x0f;
  if (channels !== 1 && channels !== 2) return Reject.BAD_CHANNELS;
  const frames = view.getUint16(HEADER.FRAMES, true);
  if (frames !== QUANTUM_FRAMES) return Reject.BAD_FRAMES;
  const silent = (flags & FLAG.SILENT) !== 0;
  const redundancy = (flags & FLAG.REDUNDANCY_MASK) >> FLAG.REDUNDANCY_SHIFT;
  if (silent && redundancy !== 0) return Reject.BAD_FLAGS;
  if (len !== packetBytes(channels, silent, redundancy)) return Reject.BAD_LENGTH;
  h.flags = flags;
  h.redundancy = redundancy;
  h.control = 0;
  h.streamId = view.getUint8(HEADER.STREAM_ID);
  h.format = format;
  h.channels = channels;
  h.frames = frames;
  h.sequence = view.getUint32(HEADER.SEQUENCE, true);
  h.captureTimeUs = view.getUint32(HEADER.CAPTURE_TIME, true);
  return Reject.OK;
}

/**
 * Write the samples of a packet whose header `h` was accepted by decodeHeader into `dst`
 * (stereo interleaved, QUANTUM_SAMPLES floats at `offset`); mono is duplicated to both sides.
 * `index` 0 is the packet's own quantum, k ≤ h.redundancy the copy of sequence − k.
 */
export function decodeSamples(view: DataView, h: PacketHeader, dst: Float32Array, offset: number, index = 0): void {
  if ((h.flags & FLAG.SILENT) !== 0) {
    dst.fill(0, offset, offset + QUANTUM_FRAMES * 2);
    return;
  }
  let o = HEADER.SIZE + index * quantumBytes(h.channels);
  if (h.channels === 2) {
    for (let i = 0; i < QUANTUM_FRAMES * 2; i++) {
      dst[offset + i] = view.getInt16(o, true) / 32768;
      o += 2;
    }
  } else {
    for (let f = 0; f < QUANTUM_FRAMES; f++) {
      const x = view.getInt16(o, true) / 32768;
      dst[offset + 2 * f] = x;
      dst[offset + 2 * f + 1] = x;
      o += 2;
    }
  }
}

/** FNV-1a over the PCM payload of a packet (sample bytes only): the test taps compare these. */
export function payloadHash(bytes: Uint8Array, length: number): number {
  let h = 0x811c9dc5;
  for (let i = HEADER.SIZE; i < length; i++) {
    h ^= bytes[i]!;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * The same FNV-1a hash, computed from decoded floats (stereo interleaved at `offset`) re-quantised
 * to the packet's channel layout: equals payloadHash of the sent packet iff decoding was exact.
 */
export function decodedHash(src: Float32Array, offset: number, channels: number, silent: boolean): number {
  let h = 0x811c9dc5;
  if (silent) return h;
  const step = channels === 2 ? 1 : 2;
  for (let i = 0; i < QUANTUM_FRAMES * 2; i += step) {
    const s = floatToPcm16(src[offset + i]!) & 0xffff;
    h ^= s & 0xff;
    h = Math.imul(h, 0x01000193);
    h ^= s >>> 8;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Payload bit rate of a continuous (non-silent) stream, kbit/s: 375 packets/s (UI: redundancy cost). */
export function payloadKbps(channels: number, redundancy: number): number {
  return Math.round((packetBytes(channels, false, redundancy) * 8 * (48_000 / QUANTUM_FRAMES)) / 1000);
}
