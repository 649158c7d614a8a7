// Tutti audio wire format (v1 PCM16, v2 adds PCM24): one packet = one 128-frame quantum, sent on
// an unordered, unreliable RTCDataChannel. Encoded and decoded in the network worker; see docs/PROTOCOL.md.
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
/** Version 1: PCM16 audio and control packets. Every PCM16 and control packet is sent as v1, which every Tutti decodes. */
export const VERSION = 1;
export const MAGIC_VERSION_BYTE = (MAGIC << 4) | VERSION;
/**
 * Version 2: the v1 layout with PCM24 samples allowed. Sent only to a peer whose member state says
 * its decoder takes it (`wire` ≥ 2, MemberState); a v1 decoder counts it as `bad-version`.
 */
export const VERSION_PCM24 = 2;
/**
 * Version 3: clock control packets (CLOCK_REQUEST, CLOCK_REPLY: the shared clock's exchanges,
 * workers/clock-sync.ts), which carry it and nothing else: audio stays v1/v2, and any other packet
 * with version 3 is `bad-version`. Sent only to a peer whose member state says `wire` ≥ 3.
 */
export const VERSION_CLOCK = 3;
/**
 * Version 4: the ONE_WAY control packet (the 12-byte control layout; it carries version 4 and
 * nothing else does): how long the sender's audio takes from our capture stamp to its speaker, as
 * the sender of the packet measures it. Sent only to a peer whose member state says `wire` ≥ 4.
 */
export const VERSION_ONE_WAY = 4;
/** The highest version this decoder accepts (published as MemberState.wire). */
export const WIRE_VERSION = VERSION_ONE_WAY;

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
  /** (v3) Ask the peer's clock: CLOCK layout, T1 = our clock when sent. */
  CLOCK_REQUEST: 5,
  /** (v3) The answer: T1 echoed, T2 = the answerer's clock when the request came, T3 = when it answered. */
  CLOCK_REPLY: 6,
  /**
   * (v4) Your audio reaches my speaker `time` µs after its capture stamp (the median of the
   * packets of the last 0.4 s, less a backlog about to be trimmed); `id` counts up by one per report, so a report that the
   * unordered channel delivers after a newer one is dropped. Leader mode advances a member's
   * clicks by it (docs/ARCHITECTURE.md §12c).
   */
  ONE_WAY: 7,
} as const;
export type ControlKind = (typeof ControlKind)[keyof typeof ControlKind];

/**
 * Clock packets (v3): [magic/version, FLAGS = CONTROL, kind, 0, id u32, T1 f64, (reply:) T2 f64,
 * T3 f64]; times are each worker's clock in ms since the epoch (performance.timeOrigin + now()),
 * as float64: sub-microsecond resolution, no wrap.
 */
export const CLOCK = {
  T1: 8,
  T2: 16,
  T3: 24,
  REQUEST_SIZE: 16,
  REPLY_SIZE: 32,
} as const;

/** Sample formats. v1 carries PCM16 only; v2 also PCM24; FLOAT32 keeps a reserved code. */
export const SampleFormat = {
  PCM16: 0,
  PCM24: 1,
  FLOAT32: 2,
} as const;
export type SampleFormat = (typeof SampleFormat)[keyof typeof SampleFormat];

export const BYTES_PER_SAMPLE: Record<SampleFormat, number> = { 0: 2, 1: 3, 2: 4 };

/**
 * Quanta a sender puts in one packet: 1 (a packet every 2.67 ms, the lowest latency), or 2 (every
 * other quantum, carrying the one before as its first redundant copy: half the packets for a busy
 * computer, 2.67 ms later for the first of each pair). No new field: a receiver takes the copy as
 * it takes any (FLAG.REDUNDANCY_MASK), so every Tutti decodes it.
 */
export type QuantaPerPacket = 1 | 2;

/** The sample formats a sender may choose, by bit depth (the UI's and the page's name for them). */
export type SendBits = 16 | 24;
export function formatOfBits(bits: SendBits): SampleFormat {
  return bits === 24 ? SampleFormat.PCM24 : SampleFormat.PCM16;
}
export function bitsOfFormat(format: SampleFormat): SendBits {
  return format === SampleFormat.PCM24 ? 24 : 16;
}
/** The header version a packet of `format` is sent with: PCM16 stays v1 for every receiver. */
export function versionOf(format: SampleFormat): number {
  return format === SampleFormat.PCM16 ? VERSION : VERSION_PCM24;
}
/** PCM24 full scale: decoded x = s / 2^23, exact in float32 (24-bit mantissa). */
const PCM24_SCALE = 8_388_608;

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

/** Bytes of the largest quantum: stereo PCM24. */
const MAX_QUANTUM_BYTES = QUANTUM_FRAMES * BUS_CHANNELS * 3;
/** Largest packet: header + (1 + MAX_REDUNDANCY) stereo PCM24 quanta (3086 bytes; 2062 for PCM16). */
export const MAX_PACKET_BYTES = HEADER.SIZE + (1 + MAX_REDUNDANCY) * MAX_QUANTUM_BYTES;

/** Decoded header fields; one instance is reused for every packet. */
export interface PacketHeader {
  flags: number;
  /** Previous frames carried after the current one (flags bits 4–5). */
  redundancy: number;
  /** For CONTROL packets: kind, id and time; 0 otherwise. */
  control: number;
  controlId: number;
  controlTime: number;
  /** For clock packets (v3): T1, T2, T3 (ms since the epoch; T2, T3 only in a reply). */
  clockT1: number;
  clockT2: number;
  clockT3: number;
  streamId: number;
  format: SampleFormat;
  channels: number;
  frames: number;
  sequence: number;
  captureTimeUs: number;
}

export function newHeader(): PacketHeader {
  return { flags: 0, redundancy: 0, control: 0, controlId: 0, controlTime: 0, clockT1: 0, clockT2: 0, clockT3: 0, streamId: 0, format: SampleFormat.PCM16, channels: 2, frames: QUANTUM_FRAMES, sequence: 0, captureTimeUs: 0 };
}

/** Sample bytes of one quantum. */
export function quantumBytes(channels: number, format: SampleFormat = SampleFormat.PCM16): number {
  return QUANTUM_FRAMES * channels * BYTES_PER_SAMPLE[format];
}

/** Bytes of a packet for `channels` carrying 1 + `redundancy` quanta, or of a header-only silent packet. */
export function packetBytes(channels: number, silent: boolean, redundancy = 0, format: SampleFormat = SampleFormat.PCM16): number {
  return silent ? HEADER.SIZE : HEADER.SIZE + (1 + redundancy) * quantumBytes(channels, format);
}

/** Float sample to PCM16: clamp to full scale, round to nearest. Inverse of `x / 32768` exactly. */
export function floatToPcm16(x: number): number {
  const s = Math.round(x * 32768);
  return s > 32767 ? 32767 : s < -32768 ? -32768 : s | 0; // | 0: an integer sample, never -0 (nor NaN)
}

/** Float sample to PCM24: clamp to full scale, round to nearest. Inverse of `x / 2^23` exactly. */
export function floatToPcm24(x: number): number {
  const s = Math.round(x * PCM24_SCALE);
  return s > 8_388_607 ? 8_388_607 : s < -8_388_608 ? -8_388_608 : s | 0; // | 0: never -0 (nor NaN)
}

/** Quantise `x` as `format` stores it. */
export function quantise(x: number, format: SampleFormat): number {
  return format === SampleFormat.PCM24 ? floatToPcm24(x) : floatToPcm16(x);
}

/** Write one quantised sample at byte `o` (little-endian); returns the next offset. */
function writeSample(out: Uint8Array, view: DataView, o: number, s: number, format: SampleFormat): number {
  if (format === SampleFormat.PCM24) {
    out[o] = s & 0xff;
    out[o + 1] = (s >> 8) & 0xff;
    out[o + 2] = (s >> 16) & 0xff;
    return o + 3;
  }
  view.setInt16(o, s, true);
  return o + 2;
}

/** The quantised sample at byte `o` of a packet of `format` (the inverse of writeSample). */
export function readSample(view: DataView, o: number, format: SampleFormat): number {
  return format === SampleFormat.PCM24 ? (view.getInt8(o + 2) << 16) | view.getUint16(o, true) : view.getInt16(o, true);
}

/**
 * Encode one quantum. `src` is the internal stereo bus (interleaved, 256 samples);
 * with channels = 1 the two sides are averaged. Returns the packet length written to `out`.
 * `out` must hold MAX_PACKET_BYTES. A quantum whose every sample quantises to 0 is sent as
 * a header-only SILENT packet (bit-exact: the receiver rebuilds the same zeros). PCM16 packets
 * carry version 1, PCM24 packets version 2 (`versionOf`).
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
  format: SampleFormat = SampleFormat.PCM16,
): number {
  let nonZero = false;
  let o: number = HEADER.SIZE;
  if (channels === 2) {
    for (let i = 0; i < QUANTUM_FRAMES * 2; i++) {
      const s = quantise(src[i]!, format);
      if (s !== 0) nonZero = true;
      o = writeSample(out, view, o, s, format);
    }
  } else {
    for (let f = 0; f < QUANTUM_FRAMES; f++) {
      const s = quantise((src[2 * f]! + src[2 * f + 1]!) * 0.5, format);
      if (s !== 0) nonZero = true;
      o = writeSample(out, view, o, s, format);
    }
  }
  let extra = 0;
  if (redundancy) {
    extra = redundancy.append(out, o, channels, format, nonZero);
    o += extra * quantumBytes(channels, format);
  }
  const silent = !nonZero && extra === 0;
  out[HEADER.MAGIC_VERSION] = (MAGIC << 4) | versionOf(format);
  out[HEADER.FLAGS] = (silent ? FLAG.SILENT : 0) | (extra << FLAG.REDUNDANCY_SHIFT);
  out[HEADER.STREAM_ID] = streamId & 0xff;
  out[HEADER.FORMAT_CHANNELS] = (format << 4) | channels;
  view.setUint16(HEADER.FRAMES, QUANTUM_FRAMES, true);
  view.setUint32(HEADER.SEQUENCE, sequence >>> 0, true);
  view.setUint32(HEADER.CAPTURE_TIME, captureTimeUs >>> 0, true);
  return silent ? HEADER.SIZE : o;
}

/**
 * The sender's last MAX_REDUNDANCY encoded quanta (their packet bytes), appended after the current one.
 * Preallocated; append() allocates nothing. A quantum whose copies would all be silence is sent
 * header-only as before, so a muted sender still sends 14-byte packets.
 */
export class RedundancyHistory {
  /** Frames to carry (0..MAX_REDUNDANCY). */
  frames = 0;
  /**
   * Carry the copies even when they and the current quantum are all silence (then the packet is
   * zeros, not header-only). A sender with two quanta per packet needs it: the copy of the pair's
   * first is its only packet, and a SILENT packet stands for its own quantum alone (v1 allows no
   * copies on it).
   */
  silentCopies = false;
  private readonly bytes = new Uint8Array(MAX_REDUNDANCY * MAX_QUANTUM_BYTES);
  private readonly nonZero = new Uint8Array(MAX_REDUNDANCY);
  private readonly channels = new Uint8Array(MAX_REDUNDANCY);
  private readonly formats = new Uint8Array(MAX_REDUNDANCY);
  /** History entries valid (a channel-count change or a restart empties it). */
  private count = 0;

  /**
   * Append up to `frames` previous quanta after the current one (already at out[HEADER.SIZE, end)),
   * then push the current one into the history. Only quanta of the same channel count and format
   * are carried. Returns how many were appended.
   */
  append(out: Uint8Array, end: number, channels: number, format: SampleFormat, currentNonZero: boolean): number {
    const qb = quantumBytes(channels, format);
    let n = 0;
    let anyNonZero = currentNonZero;
    const want = Math.min(this.frames, this.count);
    for (let k = 0; k < want; k++) {
      if (this.channels[k] !== channels || this.formats[k] !== format) break;
      if (this.nonZero[k]) anyNonZero = true;
      n++;
    }
    if (anyNonZero || this.silentCopies) {
      for (let k = 0; k < n; k++) {
        const src = k * MAX_QUANTUM_BYTES;
        const dst = end + k * qb;
        for (let b = 0; b < qb; b++) out[dst + b] = this.bytes[src + b]!;
      }
    } else {
      n = 0;
    }
    // Shift the history by one (newest first) and store the current quantum at index 0.
    const slot = MAX_QUANTUM_BYTES;
    for (let k = MAX_REDUNDANCY - 1; k > 0; k--) {
      this.bytes.copyWithin(k * slot, (k - 1) * slot, k * slot);
      this.nonZero[k] = this.nonZero[k - 1]!;
      this.channels[k] = this.channels[k - 1]!;
      this.formats[k] = this.formats[k - 1]!;
    }
    for (let b = 0; b < qb; b++) this.bytes[b] = currentNonZero ? out[HEADER.SIZE + b]! : 0;
    this.nonZero[0] = currentNonZero ? 1 : 0;
    this.channels[0] = channels;
    this.formats[0] = format;
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

/** Encode a one-way report (v4) into `view`: report `id`, `us` µs from the peer's capture stamp to our speaker; returns its length. */
export function encodeOneWay(view: DataView, id: number, us: number): number {
  encodeControl(view, ControlKind.ONE_WAY, id, Math.max(0, Math.min(0xffffffff, Math.round(us))));
  view.setUint8(HEADER.MAGIC_VERSION, (MAGIC << 4) | VERSION_ONE_WAY);
  return CONTROL.SIZE;
}

/** Encode a clock request (v3) into `view`; returns its length. */
export function encodeClockRequest(view: DataView, id: number, t1: number): number {
  view.setUint8(HEADER.MAGIC_VERSION, (MAGIC << 4) | VERSION_CLOCK);
  view.setUint8(HEADER.FLAGS, FLAG.CONTROL);
  view.setUint8(CONTROL.KIND, ControlKind.CLOCK_REQUEST);
  view.setUint8(3, 0);
  view.setUint32(CONTROL.ID, id >>> 0, true);
  view.setFloat64(CLOCK.T1, t1, true);
  return CLOCK.REQUEST_SIZE;
}

/** Encode a clock reply (v3) into `view`; returns its length. */
export function encodeClockReply(view: DataView, id: number, t1: number, t2: number, t3: number): number {
  encodeClockRequest(view, id, t1);
  view.setUint8(CONTROL.KIND, ControlKind.CLOCK_REPLY);
  view.setFloat64(CLOCK.T2, t2, true);
  view.setFloat64(CLOCK.T3, t3, true);
  return CLOCK.REPLY_SIZE;
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
  const version = mv & 0x0f;
  const flags = view.getUint8(HEADER.FLAGS);
  // (len ≥ 12 here.) Version 3 is a clock packet's and nothing else's; version 4 a one-way report's.
  const kindByte = view.getUint8(CONTROL.KIND);
  const clockKind = flags === FLAG.CONTROL && (kindByte === ControlKind.CLOCK_REQUEST || kindByte === ControlKind.CLOCK_REPLY);
  const oneWayKind = flags === FLAG.CONTROL && kindByte === ControlKind.ONE_WAY;
  if (version !== VERSION && version !== VERSION_PCM24 && !(version === VERSION_CLOCK && clockKind) && !(version === VERSION_ONE_WAY && oneWayKind)) return Reject.BAD_VERSION;
  if (len < HEADER.SIZE && (flags & FLAG.CONTROL) === 0) return Reject.TOO_SHORT;
  if ((flags & ~KNOWN_FLAGS) !== 0) return Reject.BAD_FLAGS;
  if ((flags & FLAG.CONTROL) !== 0) {
    if (flags !== FLAG.CONTROL) return Reject.BAD_FLAGS;
    const kind = view.getUint8(CONTROL.KIND);
    const clock = version === VERSION_CLOCK; // and so a clock kind (above)
    const size = !clock ? CONTROL.SIZE : kind === ControlKind.CLOCK_REQUEST ? CLOCK.REQUEST_SIZE : CLOCK.REPLY_SIZE;
    if (len !== size) return Reject.BAD_CONTROL;
    const oneWay = version === VERSION_ONE_WAY; // and so a one-way kind (above)
    if ((!clock && !oneWay && (kind < ControlKind.PING || kind > ControlKind.ECHO_OFF)) || view.getUint8(3) !== 0) return Reject.BAD_CONTROL;
    h.flags = flags;
    h.control = kind;
    h.controlId = view.getUint32(CONTROL.ID, true);
    h.redundancy = 0;
    if (clock) {
      h.controlTime = 0;
      h.clockT1 = view.getFloat64(CLOCK.T1, true);
      h.clockT2 = kind === ControlKind.CLOCK_REPLY ? view.getFloat64(CLOCK.T2, true) : 0;
      h.clockT3 = kind === ControlKind.CLOCK_REPLY ? view.getFloat64(CLOCK.T3, true) : 0;
      if (!Number.isFinite(h.clockT1) || !Number.isFinite(h.clockT2) || !Number.isFinite(h.clockT3)) return Reject.BAD_CONTROL;
    } else h.controlTime = view.getUint32(CONTROL.TIME, true);
    return Reject.OK;
  }
  const fc = view.getUint8(HEADER.FORMAT_CHANNELS);
  const format = fc >> 4;
  // v1 carries PCM16 only; v2 PCM16 or PCM24 (we send PCM16 as v1, but a v2 PCM16 packet is valid).
  if (format !== SampleFormat.PCM16 && (version === VERSION || format !== SampleFormat.PCM24)) return Reject.BAD_FORMAT;
  const channels = fc & 0x0f;
  if (channels !== 1 && channels !== 2) return Reject.BAD_CHANNELS;
  const frames = view.getUint16(HEADER.FRAMES, true);
  if (frames !== QUANTUM_FRAMES) return Reject.BAD_FRAMES;
  const silent = (flags & FLAG.SILENT) !== 0;
  const redundancy = (flags & FLAG.REDUNDANCY_MASK) >> FLAG.REDUNDANCY_SHIFT;
  if (silent && redundancy !== 0) return Reject.BAD_FLAGS;
  if (len !== packetBytes(channels, silent, redundancy, format)) return Reject.BAD_LENGTH;
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
  const format = h.format;
  const bytes = BYTES_PER_SAMPLE[format];
  const scale = format === SampleFormat.PCM24 ? 1 / PCM24_SCALE : 1 / 32768; // powers of two: exact
  let o = HEADER.SIZE + index * quantumBytes(h.channels, format);
  if (h.channels === 2) {
    for (let i = 0; i < QUANTUM_FRAMES * 2; i++) {
      dst[offset + i] = readSample(view, o, format) * scale;
      o += bytes;
    }
  } else {
    for (let f = 0; f < QUANTUM_FRAMES; f++) {
      const x = readSample(view, o, format) * scale;
      dst[offset + 2 * f] = x;
      dst[offset + 2 * f + 1] = x;
      o += bytes;
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
 * to the packet's channel layout and format: equals payloadHash of the sent packet iff decoding
 * was exact.
 */
export function decodedHash(src: Float32Array, offset: number, channels: number, silent: boolean, format: SampleFormat = SampleFormat.PCM16): number {
  let h = 0x811c9dc5;
  if (silent) return h;
  const step = channels === 2 ? 1 : 2;
  const bytes = BYTES_PER_SAMPLE[format];
  for (let i = 0; i < QUANTUM_FRAMES * 2; i += step) {
    const s = quantise(src[offset + i]!, format);
    for (let b = 0; b < bytes; b++) {
      h ^= (s >> (8 * b)) & 0xff;
      h = Math.imul(h, 0x01000193);
    }
  }
  return h >>> 0;
}

/** Payload bit rate of a continuous (non-silent) stream, kbit/s: 375 packets/s (UI: what a choice costs). */
export function payloadKbps(channels: number, redundancy: number, format: SampleFormat = SampleFormat.PCM16): number {
  return Math.round((packetBytes(channels, false, redundancy, format) * 8 * (48_000 / QUANTUM_FRAMES)) / 1000);
}
