// Seeded property-based fuzzing of the receive path (Node): hostile and valid packets go through
// the wire decoder and the de-jitter writer — directly, or through the network worker's own
// receiver (workers/receiver.ts, with the peer records the worker builds and fake channels) —
// while a Mixer renders the shared playback memory between them. Shared by tests/unit/fuzz.test.ts
// (~20k cases) and bench/fuzz.ts (10^6 cases).
//
// Properties checked, with the seed in every failure:
//  - no exception escapes decodeHeader, decodeSamples, JitterWriter.accept, Mixer.render or the
//    worker's Receiver.onPacket, and the receiver never reports an error;
//  - every packet is rejected for the reason an independent oracle (PROTOCOL.md §1.7, written here
//    from the table, on raw bytes) gives — per packet in direct mode, per reason in worker mode;
//  - decodeSamples writes exactly the packet's samples (oracle on raw bytes) and nothing around them;
//  - accepted packets are all accounted for: received + late + duplicates + stale = accepted;
//  - a canary peer streaming in order next to the fuzzed peer plays bit-exactly, every quantum,
//    with 0 missed/late/duplicates/resyncs/rejected; the 30 unused slots (samples, TAG, TAKEN and
//    fields, pre-filled with a pattern) are never written.

import { HALF } from '../../worklets/resampler.ts';
import { DEFAULT_DEPTH, JITTER_SLOTS, MAX_PEERS, QUANTUM_FRAMES, QUANTUM_SAMPLES } from '../../src/shared/constants.ts';
import { PEER_I32, PEER_F32, PeerState, PlaybackViews, createPlaybackMemory } from '../../src/shared/memory-layout.ts';
import { REJECT_NAMES, Reject, SampleFormat, decodeHeader, decodeSamples, newHeader } from '../../src/shared/wire.ts';
import type { FromWorker } from '../../src/shared/worker-protocol.ts';
import { DepthController } from '../../workers/depth-controller.ts';
import { Arrival, JitterWriter, findFreePeer } from '../../workers/jitter-writer.ts';
import { takePeerStats } from '../../workers/peer-stats.ts';
import { OutputClock } from '../../workers/shown-drift.ts';
import { Receiver } from '../../workers/receiver.ts';
import { RemotePeer } from '../../workers/remote-peer.ts';
import { Mixer } from '../../worklets/mixer.ts';
import { mulberry32, randInt } from '../unit/prng.ts';

export type FuzzMode = 'direct' | 'worker';

/** Case generators. `not-binary` exists only in worker mode (the type check is the worker's). */
export const CASE_KINDS = ['random', 'header-mix', 'truncated', 'oversized', 'bad-field', 'valid', 'not-binary'] as const;
export type CaseKind = (typeof CASE_KINDS)[number];

export interface FuzzOptions {
  seed: number;
  cases: number;
  mode: FuzzMode;
  /** Stop collecting failure messages after this many (the run continues and counts). */
  maxFailures?: number;
}

export interface FuzzReport {
  mode: FuzzMode;
  seed: number;
  cases: number;
  ticks: number;
  ms: number;
  casesPerSecond: number;
  byKind: Record<string, number>;
  /** What the oracle says each packet should be rejected for (by reason name, 'ok' = accepted). */
  expected: Record<string, number>;
  /** What the code under test reported (direct: per-packet returns; worker: its stats). */
  actual: Record<string, number>;
  /** The fuzzed peer's receive counters after the run. */
  fuzzPeer: { received: number; late: number; duplicates: number; stale: number; resyncs: number };
  canary: { framesChecked: number; played: number; missed: number; late: number; duplicates: number; resyncs: number; rejected: number };
  /** Failures (first maxFailures), each naming the seed and case. Empty = every property held. */
  failures: string[];
  failureCount: number;
}

// ---- the oracle: PROTOCOL.md §1.7, on raw bytes -----------------------------------------------

/** Expected rejection of a binary message, from the spec's table, checked in its order. */
export function specReject(b: Uint8Array): Reject {
  // Order of checks as PROTOCOL.md §1.7 lists them; a 12-byte packet may be a control packet.
  if (b.length < 2 || (b.length < 14 && b.length !== 12)) return Reject.TOO_SHORT;
  if (b[0]! >> 4 !== 0xa) return Reject.BAD_MAGIC;
  const version = b[0]! & 0x0f;
  const flags = b[1]!;
  // Version 3 only for a clock packet: flags = CONTROL, kind 5 (request, 16 bytes) or 6 (reply, 32).
  const clock = version === 3 && flags === 0x02 && (b[2] === 5 || b[2] === 6);
  // Version 4 only for a one-way report: flags = CONTROL, kind 7 (12 bytes).
  const oneWay = version === 4 && flags === 0x02 && b[2] === 7;
  if (version !== 1 && version !== 2 && !clock && !oneWay) return Reject.BAD_VERSION;
  if (b.length < 14 && (flags & 0x02) === 0) return Reject.TOO_SHORT;
  if ((flags & ~0x37) !== 0) return Reject.BAD_FLAGS;
  if ((flags & 0x02) !== 0) {
    if (flags !== 0x02) return Reject.BAD_FLAGS;
    if (clock) {
      if (b.length !== (b[2] === 5 ? 16 : 32) || b[3]! !== 0) return Reject.BAD_CONTROL;
      const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
      for (let o = 8; o < b.length; o += 8) if (!Number.isFinite(v.getFloat64(o, true))) return Reject.BAD_CONTROL;
      return Reject.OK;
    }
    if (b.length !== 12) return Reject.BAD_CONTROL;
    if ((!oneWay && (b[2]! < 1 || b[2]! > 4)) || b[3]! !== 0) return Reject.BAD_CONTROL;
    return Reject.OK;
  }
  // v1: PCM16 (0) only; v2: PCM16 or PCM24 (1).
  const format = b[3]! >> 4;
  if (format !== 0 && (version === 1 || format !== 1)) return Reject.BAD_FORMAT;
  const ch = b[3]! & 0x0f;
  if (ch !== 1 && ch !== 2) return Reject.BAD_CHANNELS;
  if ((b[4]! | (b[5]! << 8)) !== 128) return Reject.BAD_FRAMES;
  const silent = (flags & 1) !== 0;
  const redundancy = (flags >> 4) & 3;
  if (silent && redundancy !== 0) return Reject.BAD_FLAGS;
  const want = silent ? 14 : 14 + (1 + redundancy) * 128 * ch * (format === 1 ? 3 : 2);
  if (b.length !== want) return Reject.BAD_LENGTH;
  return Reject.OK;
}

function int16At(b: Uint8Array, o: number): number {
  return ((b[o]! | (b[o + 1]! << 8)) << 16) >> 16;
}

function int24At(b: Uint8Array, o: number): number {
  return ((b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16)) << 8) >> 8;
}

// ---- packet construction (by hand from the spec, not with the encoder under test) -------------

/** `pcm24`: a version-2 PCM24 packet; otherwise version 1, PCM16. */
function writeHeader(b: Uint8Array, flags: number, streamId: number, channels: number, seq: number, timeUs: number, pcm24 = false): void {
  b[0] = pcm24 ? 0xa2 : 0xa1;
  b[1] = flags;
  b[2] = streamId & 0xff;
  b[3] = (pcm24 ? 0x10 : 0) | (channels & 0x0f);
  b[4] = 128;
  b[5] = 0;
  b[6] = seq & 0xff;
  b[7] = (seq >>> 8) & 0xff;
  b[8] = (seq >>> 16) & 0xff;
  b[9] = (seq >>> 24) & 0xff;
  b[10] = timeUs & 0xff;
  b[11] = (timeUs >>> 8) & 0xff;
  b[12] = (timeUs >>> 16) & 0xff;
  b[13] = (timeUs >>> 24) & 0xff;
}

/** The canary's sample i of frame seq: a fixed non-zero pseudo-random int16. */
function canarySample(seq: number, i: number): number {
  let h = Math.imul((seq ^ 0x9e3779b9) >>> 0, 0x85ebca6b) ^ Math.imul(i + 1, 0xc2b2ae35);
  h ^= h >>> 13;
  h = Math.imul(h, 0x27d4eb2f);
  h ^= h >>> 16;
  const s = (h & 0xffff) - 32768;
  return s === 0 ? 1 : s;
}

const MAX_LEN = 4096;
const PATTERN_I32 = 0x5a5a5a5a;
const PATTERN_F32 = -7.25;
const FUZZ_SLOT = 1;
const CANARY_SLOT = 0;
const CANARY_STREAM = 77;

/** Exact-length ArrayBuffers, one per length, reused (the handler never keeps a packet). */
class BufferPool {
  private readonly bufs: (ArrayBuffer | undefined)[] = [];
  get(len: number): Uint8Array {
    let b = this.bufs[len];
    if (!b) this.bufs[len] = b = new ArrayBuffer(len);
    return new Uint8Array(b);
  }
}

/** Where packets go: the decoder and writer called directly, or the real worker's onmessage. */
interface ReceivePath {
  /** Deliver one fuzz case; returns the reason the code under test gave, when it reports per packet. */
  fuzz(data: unknown, expected: Reject): void;
  canary(bytes: Uint8Array): void;
  finish(): Promise<{ actual: Record<string, number>; fuzzPeer: FuzzReport['fuzzPeer']; canaryCounters: Omit<FuzzReport['canary'], 'framesChecked' | 'played' | 'missed'> }>;
}

export async function runFuzz(opts: FuzzOptions): Promise<FuzzReport> {
  const { seed, cases, mode } = opts;
  const maxFailures = opts.maxFailures ?? 20;
  const rng = mulberry32(seed);
  const failures: string[] = [];
  let failureCount = 0;
  const fail = (msg: string): void => {
    failureCount++;
    if (failures.length < maxFailures) failures.push(`seed ${seed} (rerun: TUTTI_SEED=${seed}) ${mode}: ${msg}`);
  };

  const sab = createPlaybackMemory();
  const v = new PlaybackViews(sab);
  fillUnusedSlots(v);
  const mixer = new Mixer(v);
  const outL = new Float32Array(QUANTUM_FRAMES);
  const outR = new Float32Array(QUANTUM_FRAMES);
  const pool = new BufferPool();
  const expected: Record<string, number> = {};
  let notAudio = 0;
  const byKind: Record<string, number> = {};
  let caseNo = 0;

  const path: ReceivePath = mode === 'direct' ? directPath(v, fail, () => caseNo) : await workerPath(sab, fail);

  // The fuzzed sender's plausible state, so valid packets land near, behind and far from the cursor.
  let fuzzStream = randInt(rng, 0, 255);
  let prevStream = (fuzzStream + 1) & 0xff;
  let fuzzBase = randInt(rng, 0, 2 ** 32 - 1);
  const canary0 = randInt(rng, 0, 2 ** 32 - 1);

  const validPacket = (seq: number, streamId: number): Uint8Array => {
    const silent = rng() < 0.15;
    const ch = rng() < 0.5 ? 1 : 2;
    const pcm24 = rng() < 0.3;
    const len = silent ? 14 : 14 + 128 * ch * (pcm24 ? 3 : 2);
    const b = pool.get(len);
    writeHeader(b, silent ? 1 : 0, streamId, ch, seq, randInt(rng, 0, 2 ** 32 - 1), pcm24);
    for (let i = 14; i < len; i++) b[i] = randInt(rng, 0, 255);
    return b;
  };
  const anyValid = (): Uint8Array => validPacket(randInt(rng, 0, 2 ** 32 - 1), randInt(rng, 0, 255));

  const makeCase = (kind: CaseKind): { data: unknown; intended: Reject | null } => {
    switch (kind) {
      case 'random': {
        const len = rng() < 0.5 ? randInt(rng, 0, 40) : randInt(rng, 0, 1100);
        const b = pool.get(len);
        for (let i = 0; i < len; i++) b[i] = randInt(rng, 0, 255);
        return { data: b.buffer, intended: null };
      }
      case 'header-mix': {
        // Each header byte valid or random, length near a real size or random: reaches every check.
        const sizes = [13, 14, 15, 269, 270, 271, 397, 398, 399, 525, 526, 527, 781, 782, 783];
        const len = rng() < 0.8 ? sizes[randInt(rng, 0, sizes.length - 1)]! : randInt(rng, 0, 800);
        const b = pool.get(len);
        const pcm24 = rng() < 0.4;
        const good = [pcm24 ? 0xa2 : 0xa1, rng() < 0.5 ? 0 : 1, randInt(rng, 0, 255), (pcm24 ? 0x10 : 0) | (rng() < 0.5 ? 1 : 2), 128, 0];
        for (let i = 0; i < len; i++) b[i] = i < 6 && rng() < 0.8 ? good[i]! : randInt(rng, 0, 255);
        return { data: b.buffer, intended: null };
      }
      case 'truncated': {
        const src = anyValid();
        const len = randInt(rng, 0, src.length - 1);
        const b = pool.get(len);
        b.set(src.subarray(0, len));
        return { data: b.buffer, intended: len < 14 ? Reject.TOO_SHORT : Reject.BAD_LENGTH };
      }
      case 'oversized': {
        const src = anyValid();
        const len = src.length + (rng() < 0.5 ? randInt(rng, 1, 16) : randInt(rng, 17, MAX_LEN - src.length));
        const b = pool.get(len);
        b.set(src);
        for (let i = src.length; i < len; i++) b[i] = randInt(rng, 0, 255);
        return { data: b.buffer, intended: Reject.BAD_LENGTH };
      }
      case 'bad-field': {
        const b = anyValid();
        const field = randInt(rng, 0, 5);
        switch (field) {
          case 0: b[0] = (randOtherThan(rng, 0xa, 16) << 4) | randInt(rng, 0, 15); return { data: b.buffer, intended: Reject.BAD_MAGIC };
          case 1: b[0] = 0xa0 | [0, 3, 4, 9, 15][randInt(rng, 0, 4)]!; return { data: b.buffer, intended: Reject.BAD_VERSION };
          // An undefined flag bit (0x08, 0x40 or 0x80), with the packet's own bits otherwise intact.
          case 2: b[1] = b[1]! | [0x08, 0x40, 0x80][randInt(rng, 0, 2)]!; return { data: b.buffer, intended: Reject.BAD_FLAGS };
          // A format the packet's version does not carry: anything but PCM16 in v1, FLOAT32 and up in v2.
          case 3: b[3] = (randInt(rng, b[0] === 0xa2 ? 2 : 1, 15) << 4) | (b[3]! & 0x0f); return { data: b.buffer, intended: Reject.BAD_FORMAT };
          case 4: b[3] = [0, 3, 4, 7, 8, 15][randInt(rng, 0, 5)]!; return { data: b.buffer, intended: Reject.BAD_CHANNELS };
          default: {
            const f = randOtherThan(rng, 128, 65536);
            b[4] = f & 0xff;
            b[5] = f >>> 8;
            return { data: b.buffer, intended: Reject.BAD_FRAMES };
          }
        }
      }
      case 'valid': {
        const r = rng();
        if (r < 0.01) {
          prevStream = fuzzStream; // the sender restarts
          fuzzStream = randInt(rng, 0, 255);
          fuzzBase = randInt(rng, 0, 2 ** 32 - 1);
        }
        const s = rng();
        const streamId = s < 0.95 ? fuzzStream : s < 0.98 ? prevStream : randInt(rng, 0, 255);
        const q = rng();
        const seq = q < 0.5 ? fuzzBase + randInt(rng, -2, 3) : q < 0.85 ? fuzzBase + randInt(rng, -100, 100) : randInt(rng, 0, 2 ** 32 - 1);
        return { data: validPacket(seq >>> 0, streamId).buffer, intended: Reject.OK };
      }
      case 'not-binary': {
        const options: unknown[] = ['tutti', '', null, undefined, 42, { byteLength: 526 }, new Uint8Array(526), new DataView(new ArrayBuffer(14)), [0xa1], new Blob([new Uint8Array(526)])];
        return { data: options[randInt(rng, 0, options.length - 1)], intended: Reject.NOT_BINARY };
      }
      default:
        kind satisfies never;
        throw new Error(kind);
    }
  };

  const kinds = CASE_KINDS.filter((k) => mode === 'worker' || k !== 'not-binary');
  const canaryBytes = new Uint8Array(14 + QUANTUM_SAMPLES * 2);
  let tick = 0;
  let framesChecked = 0;
  const t0 = performance.now();
  while (caseNo < cases) {
    // One canary frame per quantum, in order, like a healthy peer.
    const cseq = (canary0 + tick) >>> 0;
    writeHeader(canaryBytes, 0, CANARY_STREAM, 2, cseq, 0);
    for (let i = 0; i < QUANTUM_SAMPLES; i++) {
      const s = canarySample(cseq, i) & 0xffff;
      canaryBytes[14 + 2 * i] = s & 0xff;
      canaryBytes[15 + 2 * i] = s >>> 8;
    }
    path.canary(canaryBytes);
    // A burst of fuzz cases between two render quanta.
    const burst = Math.min(cases - caseNo, randInt(rng, 0, 6));
    for (let k = 0; k < burst; k++, caseNo++) {
      const kind = kinds[randInt(rng, 0, kinds.length - 1)]!;
      byKind[kind] = (byKind[kind] ?? 0) + 1;
      const { data, intended } = makeCase(kind);
      const want = data instanceof ArrayBuffer ? specReject(new Uint8Array(data)) : Reject.NOT_BINARY;
      if (intended !== null && intended !== want) fail(`case ${caseNo} (${kind}): generator meant ${REJECT_NAMES[intended]} but the oracle says ${REJECT_NAMES[want]} (harness bug)`);
      expected[REJECT_NAMES[want]] = (expected[REJECT_NAMES[want]] ?? 0) + 1;
      // The worker routes control packets and echoes elsewhere: valid, but never in the jitter buffer.
      if (mode === 'worker' && want === Reject.OK && data instanceof ArrayBuffer && (new Uint8Array(data)[1]! & 0x06) !== 0) notAudio++;
      try {
        path.fuzz(data, want);
      } catch (err) {
        fail(`case ${caseNo} (${kind}): exception escaped the receive path: ${String(err)}`);
      }
    }
    fuzzBase = (fuzzBase + 1) >>> 0;
    try {
      mixer.render(outL, outR);
    } catch (err) {
      fail(`tick ${tick}: Mixer.render threw: ${String(err)}`);
    }
    // The canary's frame sent at tick t plays at tick t + depth, HALF frames late (the playout
    // resampler's look-ahead; at rate 1 the samples pass through exactly); the first one ramps in.
    if (tick > DEFAULT_DEPTH + 1) {
      const pseq = (canary0 + tick - DEFAULT_DEPTH) >>> 0;
      for (let f = 0; f < QUANTUM_FRAMES; f++) {
        const g = f - HALF; // position in frame pseq; negative = the end of the frame before
        const s = g < 0 ? ((pseq - 1) >>> 0) : pseq;
        const i = g < 0 ? g + QUANTUM_FRAMES : g;
        const l = canarySample(s, 2 * i) / 32768;
        const r = canarySample(s, 2 * i + 1) / 32768;
        if (outL[f] !== l || outR[f] !== r) {
          fail(`tick ${tick} (after case ${caseNo}): canary frame ${pseq} frame ${f} played as ${outL[f]}/${outR[f]}, sent ${l}/${r}`);
          break;
        }
      }
      framesChecked++;
    }
    tick++;
  }
  const ms = performance.now() - t0;
  const done = await path.finish();

  const played = Atomics.load(v.i32, v.peerI32(CANARY_SLOT, PEER_I32.PLAYED));
  const missed = Atomics.load(v.i32, v.peerI32(CANARY_SLOT, PEER_I32.MISSED));
  const canary = { framesChecked, played, missed, ...done.canaryCounters };
  if (played !== tick - DEFAULT_DEPTH) fail(`canary played ${played} frames in ${tick} quanta, want ${tick - DEFAULT_DEPTH}`);
  for (const k of ['missed', 'late', 'duplicates', 'resyncs', 'rejected'] as const) if (canary[k] !== 0) fail(`canary ${k} = ${canary[k]}, want 0`);
  for (const name of new Set([...Object.keys(expected), ...Object.keys(done.actual)])) {
    if (name === 'ok') continue;
    if ((expected[name] ?? 0) !== (done.actual[name] ?? 0)) fail(`rejected as ${name}: ${done.actual[name] ?? 0}, oracle ${expected[name] ?? 0}`);
  }
  const fp = done.fuzzPeer;
  const accounted = fp.received + fp.late + fp.duplicates + fp.stale;
  if (accounted !== (expected['ok'] ?? 0) - notAudio) fail(`accepted packets ${expected['ok'] ?? 0} but received+late+duplicates+stale = ${accounted} (${JSON.stringify(fp)})`);
  if (Atomics.load(v.i32, v.peerI32(FUZZ_SLOT, PEER_I32.STATE)) !== PeerState.ACTIVE && mode === 'direct') fail('fuzzed slot is no longer ACTIVE');
  checkUnusedSlots(v, fail);

  return {
    mode,
    seed,
    cases,
    ticks: tick,
    ms: Math.round(ms),
    casesPerSecond: Math.round((cases / ms) * 1000),
    byKind,
    expected,
    actual: done.actual,
    fuzzPeer: fp,
    canary,
    failures,
    failureCount,
  };
}

function randOtherThan(rng: () => number, not: number, range: number): number {
  const x = randInt(rng, 0, range - 2);
  return x >= not ? x + 1 : x;
}

// ---- unused slots hold a pattern that nothing may overwrite -----------------------------------

function fillUnusedSlots(v: PlaybackViews): void {
  for (let p = 2; p < MAX_PEERS; p++) {
    // STATE stays FREE (0) so the mixer skips the slot; every other word gets the pattern.
    for (let f = 1; f < PEER_I32.SIZE + 2 * JITTER_SLOTS; f++) v.i32[v.peerI32(p, f)] = PATTERN_I32;
    v.f32[v.peerF32(p, PEER_F32.GAIN)] = PATTERN_F32;
    v.f32[v.peerF32(p, PEER_F32.PEAK)] = PATTERN_F32;
    v.f32.fill(PATTERN_F32, v.samples(p, 0), v.samples(p, 0) + JITTER_SLOTS * QUANTUM_SAMPLES);
  }
}

function checkUnusedSlots(v: PlaybackViews, fail: (m: string) => void): void {
  for (let p = 2; p < MAX_PEERS; p++) {
    if (v.i32[v.peerI32(p, PEER_I32.STATE)] !== PeerState.FREE) fail(`unused slot ${p} left FREE`);
    for (let f = 1; f < PEER_I32.SIZE + 2 * JITTER_SLOTS; f++) {
      if (v.i32[v.peerI32(p, f)] !== PATTERN_I32) {
        fail(`unused slot ${p}: int32 word ${f} overwritten`);
        return;
      }
    }
    if (v.f32[v.peerF32(p, PEER_F32.GAIN)] !== PATTERN_F32 || v.f32[v.peerF32(p, PEER_F32.PEAK)] !== PATTERN_F32) fail(`unused slot ${p}: gain/peak overwritten`);
    const s0 = v.samples(p, 0);
    for (let i = s0; i < s0 + JITTER_SLOTS * QUANTUM_SAMPLES; i++) {
      if (v.f32[i] !== PATTERN_F32) {
        fail(`unused slot ${p}: sample word ${i - s0} overwritten`);
        return;
      }
    }
  }
}

// ---- direct: decodeHeader → decodeSamples (into a guarded scratch) → JitterWriter.accept ------

function directPath(v: PlaybackViews, fail: (m: string) => void, caseNo: () => number): ReceivePath {
  const canaryW = new JitterWriter(v, CANARY_SLOT, DEFAULT_DEPTH);
  const fuzzW = new JitterWriter(v, FUZZ_SLOT, DEFAULT_DEPTH);
  fuzzW.setMuted(true); // its frames are played into silence; the canary's must come out untouched
  const h = newHeader();
  const hc = newHeader();
  const GUARD = 64;
  const scratch = new Float32Array(QUANTUM_SAMPLES + 2 * GUARD);
  const actual: Record<string, number> = {};
  const arrivals = [0, 0, 0, 0];
  let canaryRejected = 0;
  return {
    fuzz(data, want) {
      if (!(data instanceof ArrayBuffer)) throw new Error('direct mode takes ArrayBuffers only');
      const view = new DataView(data);
      const got = decodeHeader(view, h);
      actual[REJECT_NAMES[got]] = (actual[REJECT_NAMES[got]] ?? 0) + 1;
      if (got !== want) {
        const hex = Buffer.from(data, 0, Math.min(16, data.byteLength)).toString('hex');
        fail(`case ${caseNo()}: ${data.byteLength} bytes [${hex}…] decoded as ${REJECT_NAMES[got]}, spec says ${REJECT_NAMES[want]}`);
        return;
      }
      if (got !== Reject.OK) return;
      // decodeSamples writes exactly the oracle's samples and nothing outside them.
      scratch.fill(PATTERN_F32);
      decodeSamples(view, h, scratch, GUARD);
      const b = new Uint8Array(data);
      const silent = (b[1]! & 1) !== 0;
      const ch = b[3]! & 0x0f;
      const pcm24 = b[3]! >> 4 === 1;
      for (let i = 0; i < scratch.length; i++) {
        let want2: number;
        if (i < GUARD || i >= GUARD + QUANTUM_SAMPLES) want2 = PATTERN_F32;
        else if (silent) want2 = 0;
        else {
          const k = i - GUARD;
          const n = ch === 2 ? k : k >> 1;
          want2 = pcm24 ? int24At(b, 14 + 3 * n) / 8_388_608 : int16At(b, 14 + 2 * n) / 32768;
        }
        if (scratch[i] !== want2) {
          fail(`case ${caseNo()}: decodeSamples word ${i - GUARD} = ${scratch[i]}, want ${want2}`);
          break;
        }
      }
      arrivals[fuzzW.accept(h, view)]!++;
    },
    canary(bytes) {
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      if (decodeHeader(view, hc) !== Reject.OK) {
        canaryRejected++;
        return;
      }
      canaryW.accept(hc, view);
    },
    async finish() {
      const c = fuzzW.counters;
      if (arrivals[Arrival.DUPLICATE] !== c.duplicates) fail(`accept returned DUPLICATE ${arrivals[Arrival.DUPLICATE]}×, counter says ${c.duplicates}`);
      const cc = canaryW.counters;
      return {
        actual,
        fuzzPeer: { received: c.received, late: c.late, duplicates: c.duplicates, stale: c.stale, resyncs: c.resyncs },
        canaryCounters: { late: cc.late, duplicates: cc.duplicates, resyncs: cc.resyncs, rejected: canaryRejected },
      };
    },
  };
}

// ---- worker: the network worker's own receiver (workers/receiver.ts) --------------------------

/** The part of RTCDataChannel the receiver touches. */
class FakeChannel {
  binaryType = 'arraybuffer';
  readyState: RTCDataChannelState = 'open';
  bufferedAmount = 0;
  send(_data: unknown): void {}
  close(): void {
    this.readyState = 'closed';
  }
}

/**
 * The network worker's receive path as the worker builds it for each peer (net.worker.ts addPeer):
 * a slot claimed in the shared playback memory, its JitterWriter and DepthController, and every
 * message handed to Receiver.onPacket; the figures read back as the worker's stats assemble them.
 */
async function workerPath(sab: SharedArrayBuffer, fail: (m: string) => void): Promise<ReceivePath> {
  // Vite's define is not applied in Node: the production build's value (no tap here).
  (globalThis as unknown as { __TUTTI_TEST__: boolean }).__TUTTI_TEST__ = false;
  const play = new PlaybackViews(sab);
  const receiver = new Receiver(play, 1, (m: FromWorker) => {
    if (m.type === 'error') fail(`worker posted error: ${m.message}`);
  }, null);
  const peer = (id: string): RemotePeer => {
    const slot = findFreePeer(play, MAX_PEERS);
    if (slot < 0) throw new Error('no free playback slot');
    const controller = new DepthController(DEFAULT_DEPTH, false);
    return new RemotePeer(id, new FakeChannel() as unknown as RTCDataChannel, new JitterWriter(play, slot, controller.target), controller);
  };
  const canary = peer('canary');
  const fuzz = peer('fuzz');
  fuzz.writer.setGain(1);
  fuzz.writer.setMuted(true);
  return {
    fuzz(data) {
      receiver.onPacket(fuzz, data);
    },
    canary(bytes) {
      // The browser hands each message over in its own ArrayBuffer.
      receiver.onPacket(canary, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    },
    async finish() {
      const output = new OutputClock();
      const fz = takePeerStats(fuzz, 1, true, SampleFormat.PCM16, output, Date.now());
      const cn = takePeerStats(canary, 1, true, SampleFormat.PCM16, output, Date.now());
      if (fz.rejected !== Object.values(fz.rejectedBy).reduce((a, b) => a + b, 0)) fail(`rejected ${fz.rejected} ≠ sum of rejectedBy ${JSON.stringify(fz.rejectedBy)}`);
      if (fz.channelState !== 'open' || cn.channelState !== 'open') fail('a fake channel was closed by the receiver');
      const slotStates: number[] = [];
      for (let p = 0; p < MAX_PEERS; p++) slotStates.push(Atomics.load(play.i32, play.peerI32(p, PEER_I32.STATE)));
      if (slotStates.filter((st) => st !== PeerState.FREE).length !== 2) fail(`slot states after the run: ${JSON.stringify(slotStates)}`);
      for (const p of [canary, fuzz]) p.writer.release();
      return {
        actual: { ...fz.rejectedBy, ok: fz.received + fz.late + fz.duplicates + fz.stale },
        fuzzPeer: { received: fz.received, late: fz.late, duplicates: fz.duplicates, stale: fz.stale, resyncs: fz.resyncs },
        canaryCounters: { late: cn.late, duplicates: cn.duplicates, resyncs: cn.resyncs, rejected: cn.rejected },
      };
    },
  };
}

/** Figures of a report as one table row. */
export function reportRow(r: FuzzReport): Record<string, string | number> {
  return {
    mode: r.mode,
    seed: r.seed,
    cases: r.cases,
    'cases/s': r.casesPerSecond,
    rejected: r.cases - (r.expected['ok'] ?? 0),
    accepted: r.expected['ok'] ?? 0,
    'fuzz resyncs': r.fuzzPeer.resyncs,
    'canary frames checked': r.canary.framesChecked,
    failures: r.failureCount,
  };
}
