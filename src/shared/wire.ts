// Tutti audio wire format v1: one packet = one 128-frame quantum, sent on an unordered,
// unreliable RTCDataChannel. Encoded and decoded in the network worker; see docs/PROTOCOL.md.
// Encode and decode write into caller-owned buffers: nothing here allocates per packet.

import { BUS_CHANNELS, QUANTUM_FRAMES } from './constants.ts';

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
  /** The quantum is digital silence: no sample bytes follow the header. */
  SILENT: 0x01,
} as const;
const KNOWN_FLAGS = FLAG.SILENT;

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
};

/** Largest packet v1 can produce: header + 128 stereo PCM16 frames (526 bytes). */
export const MAX_PACKET_BYTES = HEADER.SIZE + QUANTUM_FRAMES * BUS_CHANNELS * 2;

/** Decoded header fields; one instance is reused for every packet. */
export interface PacketHeader {
  flags: number;
  streamId: number;
  format: SampleFormat;
  channels: number;
  frames: number;
  sequence: number;
  captureTimeUs: number;
}

export function newHeader(): PacketHeader {
  return { flags: 0, streamId: 0, format: SampleFormat.PCM16, channels: 2, frames: QUANTUM_FRAMES, sequence: 0, captureTimeUs: 0 };
}

/** Bytes of a PCM16 packet for `channels`, or of a header-only silent packet. */
export function packetBytes(channels: number, silent: boolean): number {
  return silent ? HEADER.SIZE : HEADER.SIZE + QUANTUM_FRAMES * channels * 2;
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
  out[HEADER.MAGIC_VERSION] = MAGIC_VERSION_BYTE;
  out[HEADER.FLAGS] = nonZero ? 0 : FLAG.SILENT;
  out[HEADER.STREAM_ID] = streamId & 0xff;
  out[HEADER.FORMAT_CHANNELS] = (SampleFormat.PCM16 << 4) | channels;
  view.setUint16(HEADER.FRAMES, QUANTUM_FRAMES, true);
  view.setUint32(HEADER.SEQUENCE, sequence >>> 0, true);
  view.setUint32(HEADER.CAPTURE_TIME, captureTimeUs >>> 0, true);
  return nonZero ? o : HEADER.SIZE;
}

/**
 * Validate and parse the header of `view` (the whole packet) into `h`.
 * Checks every field and the exact length; never throws.
 */
export function decodeHeader(view: DataView, h: PacketHeader): Reject {
  const len = view.byteLength;
  if (len < HEADER.SIZE) return Reject.TOO_SHORT;
  const mv = view.getUint8(HEADER.MAGIC_VERSION);
  if (mv >> 4 !== MAGIC) return Reject.BAD_MAGIC;
  if ((mv & 0x0f) !== VERSION) return Reject.BAD_VERSION;
  const flags = view.getUint8(HEADER.FLAGS);
  if ((flags & ~KNOWN_FLAGS) !== 0) return Reject.BAD_FLAGS;
  const fc = view.getUint8(HEADER.FORMAT_CHANNELS);
  const format = fc >> 4;
  if (format !== SampleFormat.PCM16) return Reject.BAD_FORMAT;
  const channels = fc & 0x0f;
  if (channels !== 1 && channels !== 2) return Reject.BAD_CHANNELS;
  const frames = view.getUint16(HEADER.FRAMES, true);
  if (frames !== QUANTUM_FRAMES) return Reject.BAD_FRAMES;
  const silent = (flags & FLAG.SILENT) !== 0;
  if (len !== packetBytes(channels, silent)) return Reject.BAD_LENGTH;
  h.flags = flags;
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
 */
export function decodeSamples(view: DataView, h: PacketHeader, dst: Float32Array, offset: number): void {
  if ((h.flags & FLAG.SILENT) !== 0) {
    dst.fill(0, offset, offset + QUANTUM_FRAMES * 2);
    return;
  }
  let o = HEADER.SIZE;
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
