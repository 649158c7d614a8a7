// Audio-quality bench of the playback engine, in Node (no browser): packet-loss concealment SNR,
// resampler THD+N, clock-drift compensation over long simulated runs, and the residual loss left
// by redundancy. Drives the real JitterWriter + Mixer (+ DepthController) on a virtual clock.
// `tsx bench/quality.ts [--short]` prints tables; runQualityBench() returns the figures (bench/run.ts).
// The simulation helpers are exported for tests/unit/engine-quality.test.ts.

import { mulberry32 } from '../tests/unit/prng.ts';
import { fileURLToPath } from 'node:url';
import { DEFAULT_DEPTH, QUANTUM_FRAMES, QUANTUM_SAMPLES, SAMPLE_RATE } from '../src/shared/constants.ts';
import { PEER_I32, PLAY_I32, PlaybackViews, createPlaybackMemory } from '../src/shared/memory-layout.ts';
import { HEADER, MAX_PACKET_BYTES, RedundancyHistory, Reject, decodeHeader, encodePacket, newHeader, packetBytes } from '../src/shared/wire.ts';
import { DepthController } from '../workers/depth-controller.ts';
import { JitterWriter } from '../workers/jitter-writer.ts';
import { Mixer } from '../worklets/mixer.ts';
import { Concealer, Fit, PLC_WINDOW } from '../worklets/plc.ts';
import { HALF, SincTable } from '../worklets/resampler.ts';

/** mulberry32, the unit tests' generator: deterministic figures for a given seed. */
export const prng = mulberry32;

// ---------------------------------------------------------------------------------------------
// Test signals and measurements
// ---------------------------------------------------------------------------------------------

/**
 * A music-like stereo test signal (interleaved, whole quanta): a few overlapping harmonic notes
 * with vibrato and attack/decay envelopes, plus a little noise, peak ≈ −6 dBFS, quantised to PCM16.
 */
export function musicSignal(seconds: number, seed: number): Float32Array {
  const rng = prng(seed);
  const frames = Math.ceil((seconds * SAMPLE_RATE) / QUANTUM_FRAMES) * QUANTUM_FRAMES;
  const out = new Float32Array(frames * 2);
  const noteLen = 0.5 * SAMPLE_RATE;
  const notes: { start: number; f0: number; pan: number; vibHz: number; vibDepth: number; amps: number[] }[] = [];
  for (let start = 0; start < frames; start += noteLen / 2) {
    notes.push({
      start,
      f0: 110 * Math.pow(2, Math.floor(rng() * 36) / 12),
      pan: rng(),
      vibHz: 4 + 3 * rng(),
      vibDepth: 0.004 * rng(),
      amps: [1, 0.5 * rng(), 0.35 * rng(), 0.2 * rng(), 0.1 * rng()],
    });
  }
  for (const n of notes) {
    const len = Math.min(noteLen, frames - n.start);
    let phase = 0;
    for (let i = 0; i < len; i++) {
      const t = i / SAMPLE_RATE;
      const env = Math.min(1, t / 0.01) * Math.exp(-3 * t);
      const f = n.f0 * (1 + n.vibDepth * Math.sin(2 * Math.PI * n.vibHz * t));
      phase += (2 * Math.PI * f) / SAMPLE_RATE;
      let x = 0;
      for (let h = 0; h < n.amps.length; h++) if (n.f0 * (h + 1) < 20000) x += n.amps[h]! * Math.sin((h + 1) * phase);
      x *= 0.12 * env;
      const j = n.start + i;
      out[2 * j] = out[2 * j]! + x * (1 - n.pan);
      out[2 * j + 1] = out[2 * j + 1]! + x * n.pan;
    }
  }
  for (let i = 0; i < out.length; i++) out[i] = Math.round((out[i]! + 0.002 * (rng() - 0.5)) * 32768) / 32768;
  return out;
}

/** Signal-to-error ratio in dB of `out` against `ref` over [from, to) samples. */
export function snrDb(ref: Float32Array, out: Float32Array, from = 0, to = ref.length): number {
  let s = 0;
  let e = 0;
  for (let i = from; i < to; i++) {
    s += ref[i]! * ref[i]!;
    const d = out[i]! - ref[i]!;
    e += d * d;
  }
  return 10 * Math.log10(s / e);
}

/**
 * THD+N (dB) of a sine at `freq` Hz played through the SincTable at `ratio` (output frame k reads
 * input position k × ratio): least-squares fit of the expected output sine (frequency × ratio,
 * free amplitude, phase and offset), residual power over fundamental power.
 */
export function resamplerThdN(freq: number, ratio: number, outFrames = 1 << 15): number {
  const sinc = new SincTable();
  const inFrames = Math.ceil(outFrames * ratio) + 2 * HALF + 2;
  const src = new Float32Array(inFrames * 2);
  const w = (2 * Math.PI * freq) / SAMPLE_RATE;
  for (let i = 0; i < inFrames; i++) src[2 * i] = src[2 * i + 1] = 0.5 * Math.sin(w * i);
  const y = new Float64Array(outFrames);
  for (let k = 0; k < outFrames; k++) y[k] = sinc.interpolate(src, HALF + k * ratio, 0);
  // Fit y ≈ a sin(w (HALF + k r)) + b cos(...) + c by the normal equations.
  const m = [0, 0, 0, 0, 0, 0, 0, 0, 0];
  const v = [0, 0, 0];
  const basis = (k: number): [number, number, number] => {
    const p = w * (HALF + k * ratio);
    return [Math.sin(p), Math.cos(p), 1];
  };
  for (let k = 0; k < outFrames; k++) {
    const b = basis(k);
    for (let i = 0; i < 3; i++) {
      v[i]! += b[i]! * y[k]!;
      for (let j = 0; j < 3; j++) m[3 * i + j]! += b[i]! * b[j]!;
    }
  }
  const [a, b, c] = solve3(m, v);
  let sig = 0;
  let res = 0;
  for (let k = 0; k < outFrames; k++) {
    const [s1, c1] = basis(k);
    const fit = a * s1 + b * c1;
    sig += fit * fit;
    const r = y[k]! - fit - c;
    res += r * r;
  }
  return 10 * Math.log10(res / sig);
}

function solve3(m: number[], v: number[]): [number, number, number] {
  const det = (q: number[]) => q[0]! * (q[4]! * q[8]! - q[5]! * q[7]!) - q[1]! * (q[3]! * q[8]! - q[5]! * q[6]!) + q[2]! * (q[3]! * q[7]! - q[4]! * q[6]!);
  const d = det(m);
  const col = (j: number) => m.map((x, i) => (i % 3 === j ? v[Math.floor(i / 3)]! : x));
  return [det(col(0)) / d, det(col(1)) / d, det(col(2)) / d];
}

// ---------------------------------------------------------------------------------------------
// Packet loss through JitterWriter + Mixer
// ---------------------------------------------------------------------------------------------

/** Which sequence numbers (0-based) a loss pattern drops. */
export function lossPattern(quanta: number, rate: number, seed: number, burst: [number, number] = [1, 1]): Uint8Array {
  const rng = prng(seed);
  const lost = new Uint8Array(quanta);
  const meanBurst = (burst[0] + burst[1]) / 2;
  // Not the first quantum (it starts the stream) nor the last few (nothing newer would follow).
  const end = quanta - 8;
  for (let s = 1; s < end; s++) {
    if (rng() < rate / meanBurst) {
      const len = burst[0] + Math.floor(rng() * (burst[1] - burst[0] + 1));
      for (let k = 0; k < len && s + k < end; k++) lost[s + k] = 1;
      s += len; // bursts do not touch
    }
  }
  return lost;
}

export interface LossRun {
  /** Output aligned with the input (the playout lag removed), stereo interleaved. */
  out: Float32Array;
  missed: number;
  recovered: number;
}

/** Play `signal` through JitterWriter + Mixer at rate 1 (delay 1 quantum, depth 8), dropping `lost`. */
export function playThrough(signal: Float32Array, lost: Uint8Array | null, redundancy: number): LossRun {
  const v = new PlaybackViews(createPlaybackMemory());
  const mixer = new Mixer(v);
  const w = new JitterWriter(v, 0, DEFAULT_DEPTH);
  const hist = new RedundancyHistory();
  hist.frames = redundancy;
  const h = newHeader();
  const bytes = new Uint8Array(MAX_PACKET_BYTES);
  const view = new DataView(bytes.buffer);
  const quanta = signal.length / QUANTUM_SAMPLES;
  const lag = (1 + DEFAULT_DEPTH) * QUANTUM_FRAMES + HALF;
  const out = new Float32Array(signal.length);
  const outL = new Float32Array(QUANTUM_FRAMES);
  const outR = new Float32Array(QUANTUM_FRAMES);
  let pending: { len: number; copy: Uint8Array } | null = null;
  for (let t = 0; t < quanta + DEFAULT_DEPTH + 3; t++) {
    // Deliver what was sent at t − 1 (delay 1 quantum, in order).
    if (pending) {
      const pv = new DataView(pending.copy.buffer, 0, pending.len);
      if (decodeHeader(pv, h) !== Reject.OK) throw new Error('packet rejected');
      w.accept(h, pv);
      pending = null;
    }
    if (t < quanta) {
      const len = encodePacket(bytes, view, signal.subarray(t * QUANTUM_SAMPLES, (t + 1) * QUANTUM_SAMPLES), 2, 1, t, 0, hist);
      if (!lost || lost[t] === 0) pending = { len, copy: bytes.slice(0, len) };
    }
    mixer.render(outL, outR);
    for (let f = 0; f < QUANTUM_FRAMES; f++) {
      const i = t * QUANTUM_FRAMES + f - lag;
      if (i >= 0 && i < quanta * QUANTUM_FRAMES) {
        out[2 * i] = outL[f]!;
        out[2 * i + 1] = outR[f]!;
      }
    }
  }
  return { out, missed: w.playCounter(PEER_I32.MISSED), recovered: w.counters.recovered };
}

/** What silence in place of each missed quantum gives: the lossless output with those quanta zeroed. */
export function zeroFill(lossless: Float32Array, missedQuanta: Iterable<number>): Float32Array {
  const z = lossless.slice();
  for (const s of missedQuanta) z.fill(0, s * QUANTUM_SAMPLES, (s + 1) * QUANTUM_SAMPLES);
  return z;
}

/** Quanta that end up missing after redundancy R: lost, and so are the R packets after it. */
export function residualMissing(lost: Uint8Array, r: number): number[] {
  const out: number[] = [];
  for (let s = 0; s < lost.length; s++) {
    let gone = lost[s] === 1;
    for (let k = 1; k <= r && gone; k++) gone = s + k < lost.length && lost[s + k] === 1;
    if (gone) out.push(s);
  }
  return out;
}

export interface PlcFigure {
  case: string;
  lossPercent: number;
  redundancy: number;
  missedPercent: number;
  snrBurgDb: number;
  snrZeroFillDb: number;
  /** SNR within the missing quanta alone (and the crossfade after each): zero fill is 0 dB there. */
  lostSnrBurgDb: number;
}

/** SNR over the given quanta only, plus `extra` frames after each. */
function snrOver(ref: Float32Array, out: Float32Array, quanta: number[], extra: number): number {
  let s = 0;
  let e = 0;
  for (const q of quanta) {
    for (let i = q * QUANTUM_SAMPLES; i < Math.min(ref.length, (q + 1) * QUANTUM_SAMPLES + 2 * extra); i++) {
      s += ref[i]! * ref[i]!;
      e += (out[i]! - ref[i]!) ** 2;
    }
  }
  return 10 * Math.log10(s / e);
}

export function plcBench(seconds: number): PlcFigure[] {
  const signal = musicSignal(seconds, 7);
  const quanta = signal.length / QUANTUM_SAMPLES;
  const lossless = playThrough(signal, null, 0);
  const skip = QUANTUM_SAMPLES; // first quantum: nothing is lost there by construction
  const exact = snrDb(signal, lossless.out, skip);
  if (exact !== Infinity) throw new Error(`lossless playout is not bit-exact (SNR ${exact} dB)`);
  const cases: { name: string; rate: number; burst: [number, number]; r: number }[] = [
    { name: '2% independent', rate: 0.02, burst: [1, 1], r: 0 },
    { name: '5% independent', rate: 0.05, burst: [1, 1], r: 0 },
    { name: '5% independent, R=1', rate: 0.05, burst: [1, 1], r: 1 },
    { name: '5% bursts of 2-3', rate: 0.05, burst: [2, 3], r: 0 },
    { name: '5% bursts of 2-3, R=1', rate: 0.05, burst: [2, 3], r: 1 },
  ];
  return cases.map((c, i) => {
    const lost = lossPattern(quanta, c.rate, 100 + i, c.burst);
    const run = playThrough(signal, lost, c.r);
    const missing = residualMissing(lost, c.r);
    if (missing.length !== run.missed) throw new Error(`${c.name}: MISSED ${run.missed}, expected ${missing.length}`);
    return {
      case: c.name,
      lossPercent: round((100 * lost.reduce((a, x) => a + x, 0)) / quanta, 2),
      redundancy: c.r,
      missedPercent: round((100 * run.missed) / quanta, 2),
      snrBurgDb: round(snrDb(signal, run.out, skip), 1),
      snrZeroFillDb: round(snrDb(signal, zeroFill(lossless.out, missing), skip), 1),
      lostSnrBurgDb: round(snrOver(signal, run.out, missing, 0), 1),
    };
  });
}

/**
 * What concealment costs on this machine (Node, the same JIT as the AudioWorklet): one stereo
 * quantum concealed at a gap's start with a FULL and a LIGHT fit, and the worst render quantum of
 * a 31-peer room in which every peer loses the same quantum (1 full fit, 6 light, 24 silent: the
 * mixer's budget, worklets/mixer.ts). Medians of many runs, µs.
 */
export function plcCostBench(): { what: string; us: number }[] {
  const signal = musicSignal(1, 3);
  const at = PLC_WINDOW + 64;
  const buf = new Float32Array((at + QUANTUM_FRAMES) * 2);
  const c = new Concealer();
  const once = (fit: Fit): number => {
    buf.set(signal.subarray(0, at * 2));
    c.reset();
    const t0 = performance.now();
    c.conceal(buf, at, QUANTUM_FRAMES, at, fit);
    return performance.now() - t0;
  };
  const median = (f: () => number, n: number): number => {
    const xs: number[] = [];
    for (let i = 0; i < n; i++) xs.push(f());
    return xs.sort((a, b) => a - b)[Math.floor(n / 2)]!;
  };
  for (let i = 0; i < 300; i++) once(i % 2 ? Fit.FULL : Fit.LIGHT); // warm up the JIT
  const full = median(() => once(Fit.FULL), 400);
  const light = median(() => once(Fit.LIGHT), 400);
  const room = median(() => {
    let t = 0;
    for (let p = 0; p < 31; p++) t += once(p < 1 ? Fit.FULL : p < 7 ? Fit.LIGHT : Fit.NONE);
    return t;
  }, 60);
  return [
    { what: 'one gap, full fit (order 48, 1024 frames), stereo', us: round(full * 1000, 0) },
    { what: 'one gap, light fit (order 16, 256 frames), stereo', us: round(light * 1000, 0) },
    { what: '31 peers lose the same quantum (1 full, 6 light, 24 silent)', us: round(room * 1000, 0) },
    { what: 'render quantum budget', us: round((QUANTUM_FRAMES / SAMPLE_RATE) * 1e6, 0) },
  ];
}

// ---------------------------------------------------------------------------------------------
// Clock drift: JitterWriter + Mixer + DepthController over a long simulated run
// ---------------------------------------------------------------------------------------------

export interface DriftOptions {
  /** Sender clock offset: it produces (1 + ppm·10⁻⁶) quanta per receiver quantum. */
  ppm: number;
  seconds: number;
  seed?: number;
  depth?: number;
  adaptive?: boolean;
  /** Network delay is 1 quantum + uniform [0, jitter) quanta. */
  jitter?: number;
  /** Statistics "after convergence" start here (simulated seconds). */
  settleSeconds?: number;
  /** Manual depth change at this time (seconds) to this depth. */
  retarget?: { at: number; depth: number };
  /** Called after each control step (10 Hz) with the last fill low point (quanta). */
  trace?: (seconds: number, lowQuanta: number, ctl: DepthController) => void;
}

export interface DriftResult {
  ppm: number;
  seconds: number;
  /** Largest |fill low point − target| after settleSeconds, quanta. */
  maxErrQuanta: number;
  /** Mean |error| over the last 5 s, quanta. */
  finalErrQuanta: number;
  target: number;
  /** The controller's drift estimate (its integral) at the end, ppm. */
  driftPpm: number;
  /** Over the last 60 s: mean and peak-to-peak of the drift estimate, peak-to-peak of the rate (ppm). */
  driftMeanPpm: number;
  driftSwingPpm: number;
  rateSwingPpm: number;
  /** Over the last 60 s: share of control ticks at a rate of exactly 1 (playout verbatim). */
  rateOneShare: number;
  rate: number;
  resyncs: number;
  late: number;
  underruns: number;
  underrunsAfterSettle: number;
  missed: number;
  /** Simulated seconds per wall-clock second. */
  speed: number;
}

/**
 * One pre-encoded stereo packet (a non-silent quantum) for the playout simulations: only the
 * sequence changes per send (`view.setUint32(HEADER.SEQUENCE, …)`), then `decodeHeader(pv, h)`.
 */
export function preEncodedPacket(): { view: DataView; pv: DataView; h: ReturnType<typeof newHeader> } {
  const src = new Float32Array(QUANTUM_SAMPLES);
  for (let i = 0; i < QUANTUM_SAMPLES; i++) src[i] = 0.25 * Math.sin(i / 7);
  const bytes = new Uint8Array(MAX_PACKET_BYTES);
  const view = new DataView(bytes.buffer);
  const len = encodePacket(bytes, view, src, 2, 3, 0, 0);
  return { view, pv: new DataView(bytes.buffer, 0, len), h: newHeader() };
}

export function simulateDrift(o: DriftOptions): DriftResult {
  const started = performance.now();
  const v = new PlaybackViews(createPlaybackMemory());
  const mixer = new Mixer(v);
  const ctl = new DepthController(o.depth ?? DEFAULT_DEPTH, o.adaptive ?? false);
  const w = new JitterWriter(v, 0, ctl.target);
  const rng = prng(o.seed ?? 1);
  const jitter = o.jitter ?? 0.5;
  const settle = o.settleSeconds ?? 30;
  const ratio = 1 + o.ppm * 1e-6;
  const { view, pv, h } = preEncodedPacket();
  const outL = new Float32Array(QUANTUM_FRAMES);
  const outR = new Float32Array(QUANTUM_FRAMES);
  const ticks = Math.round((o.seconds * SAMPLE_RATE) / QUANTUM_FRAMES);
  const settleTick = Math.round((settle * SAMPLE_RATE) / QUANTUM_FRAMES);
  const finalTick = ticks - Math.round((5 * SAMPLE_RATE) / QUANTUM_FRAMES);
  const controlEvery = (0.1 * SAMPLE_RATE) / QUANTUM_FRAMES; // 37.5 quanta
  // In-flight packets (sequence, arrival time): delays are within [1, 1 + jitter), so a few.
  const flightSeq: number[] = [];
  const flightAt: number[] = [];
  let nextSeq = 0;
  let nextControl = 0;
  let maxErr = 0;
  let finalSum = 0;
  let finalN = 0;
  let underrunsAtSettle = -1;
  const tailTick = ticks - Math.round((60 * SAMPLE_RATE) / QUANTUM_FRAMES);
  let driftSum = 0;
  let driftN = 0;
  let driftMin = Infinity;
  let driftMax = -Infinity;
  let rateMin = Infinity;
  let rateMax = -Infinity;
  let rateOne = 0;
  for (let t = 0; t < ticks; t++) {
    // Sender: packet n leaves at n / ratio receiver quanta.
    while (nextSeq / ratio <= t) {
      flightSeq.push(nextSeq);
      flightAt.push(nextSeq / ratio + 1 + jitter * rng());
      nextSeq++;
    }
    // Deliver what has arrived, earliest first.
    for (;;) {
      let best = -1;
      for (let i = 0; i < flightAt.length; i++) if (flightAt[i]! <= t && (best < 0 || flightAt[i]! < flightAt[best]!)) best = i;
      if (best < 0) break;
      view.setUint32(HEADER.SEQUENCE, flightSeq[best]! >>> 0, true);
      if (decodeHeader(pv, h) !== Reject.OK) throw new Error('packet rejected');
      w.accept(h, pv);
      ctl.onArrival(h.sequence, Atomics.load(v.i32, PLAY_I32.QUANTA));
      flightSeq.splice(best, 1);
      flightAt.splice(best, 1);
    }
    // Network worker: 10 Hz control.
    if (t >= nextControl) {
      nextControl += controlEvery;
      const nowMs = (t * QUANTUM_FRAMES * 1000) / SAMPLE_RATE;
      if (o.retarget && nowMs >= o.retarget.at * 1000 && ctl.target !== o.retarget.depth && !ctl.adaptive) ctl.setDepth(o.retarget.depth, false);
      for (let low = w.nextFillWindow(); low !== null; low = w.nextFillWindow()) {
        ctl.onWindow(low / QUANTUM_FRAMES, w.windowTrimmed);
        if (t >= settleTick) {
          const err = Math.abs(low / QUANTUM_FRAMES - ctl.target);
          if (err > maxErr) maxErr = err;
          if (t >= finalTick) {
            finalSum += err;
            finalN++;
          }
        }
      }
      ctl.update(nowMs, w.counters.late + w.playCounter(PEER_I32.UNDERRUNS));
      if (ctl.target !== w.depthTarget) w.setDepth(ctl.target);
      w.setRate(ctl.rate);
      o.trace?.(nowMs / 1000, ctl.fill(1).avg, ctl);
      if (t >= tailTick) {
        driftSum += ctl.drift;
        driftN++;
        driftMin = Math.min(driftMin, ctl.drift);
        driftMax = Math.max(driftMax, ctl.drift);
        rateMin = Math.min(rateMin, ctl.rate);
        rateMax = Math.max(rateMax, ctl.rate);
        if (ctl.rate === 1) rateOne++;
      }
    }
    if (t === settleTick) underrunsAtSettle = w.playCounter(PEER_I32.UNDERRUNS);
    mixer.render(outL, outR);
  }
  const underruns = w.playCounter(PEER_I32.UNDERRUNS);
  return {
    ppm: o.ppm,
    seconds: o.seconds,
    maxErrQuanta: round(maxErr, 3),
    finalErrQuanta: round(finalN > 0 ? finalSum / finalN : NaN, 3),
    target: ctl.target,
    driftPpm: round(ctl.drift * 1e6, 1),
    driftMeanPpm: round((driftSum / driftN) * 1e6, 1),
    driftSwingPpm: round((driftMax - driftMin) * 1e6, 1),
    rateSwingPpm: round((rateMax - rateMin) * 1e6, 1),
    rateOneShare: round(rateOne / driftN, 3),
    rate: ctl.rate,
    resyncs: w.counters.resyncs,
    late: w.counters.late,
    underruns,
    underrunsAfterSettle: underrunsAtSettle < 0 ? 0 : underruns - underrunsAtSettle,
    missed: w.playCounter(PEER_I32.MISSED),
    speed: round(o.seconds / ((performance.now() - started) / 1000), 0),
  };
}

// ---------------------------------------------------------------------------------------------
// Residual loss after redundancy, with SCTP fragmentation
// ---------------------------------------------------------------------------------------------

/** DataChannel payload that still fits one SCTP DATA chunk in a ~1200-byte datagram. */
export const ONE_DATAGRAM_BYTES = 1150;

export interface ResidualFigure {
  channels: number;
  redundancy: number;
  packetBytes: number;
  datagrams: number;
  datagramLossPercent: number;
  /** Probability a whole message is lost (any of its datagrams). */
  messageLossPercent: number;
  /** Frames still missing after redundancy: analytic q^(R+1), and a seeded Monte Carlo. */
  residualPercent: number;
  simulatedPercent: number;
  kbps: number;
}

export function residualBench(frames: number): ResidualFigure[] {
  const out: ResidualFigure[] = [];
  for (const channels of [2, 1]) {
    for (const p of [0.02, 0.05]) {
      for (let r = 0; r <= 3; r++) {
        const bytes = packetBytes(channels, false, r);
        const datagrams = bytes > ONE_DATAGRAM_BYTES ? 2 : 1;
        const q = 1 - Math.pow(1 - p, datagrams);
        const rng = prng(1000 + r + 10 * channels + Math.round(p * 100));
        const lost = new Uint8Array(frames);
        for (let s = 0; s < frames; s++) {
          let gone = false;
          for (let d = 0; d < datagrams; d++) if (rng() < p) gone = true;
          lost[s] = gone ? 1 : 0;
        }
        out.push({
          channels,
          redundancy: r,
          packetBytes: bytes,
          datagrams,
          datagramLossPercent: p * 100,
          messageLossPercent: round(q * 100, 3),
          residualPercent: round(Math.pow(q, r + 1) * 100, 4),
          simulatedPercent: round((100 * residualMissing(lost, r).length) / frames, 4),
          kbps: Math.round((bytes * 8 * (SAMPLE_RATE / QUANTUM_FRAMES)) / 1000),
        });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

function round(x: number, digits: number): number {
  const f = Math.pow(10, digits);
  return Math.round(x * f) / f;
}

export async function runQualityBench(opts: { short: boolean }): Promise<Record<string, unknown>> {
  const plc = plcBench(opts.short ? 20 : 60);
  const plcCost = plcCostBench();
  const thd: { freqHz: number; ratio: number; thdNDb: number }[] = [];
  for (const ratio of [1.0002, 1.005]) for (const freqHz of [100, 1000, 10000]) thd.push({ freqHz, ratio, thdNDb: round(resamplerThdN(freqHz, ratio), 1) });
  const driftSeconds = opts.short ? 600 : 3600;
  const drift: DriftResult[] = [];
  for (const adaptive of opts.short ? [false] : [false, true]) {
    for (const ppm of [200, -200, 1000, -1000]) drift.push({ ...simulateDrift({ ppm, seconds: driftSeconds, adaptive }), adaptive } as DriftResult & { adaptive: boolean });
  }
  const residual = residualBench(opts.short ? 200_000 : 2_000_000);
  return { plc, plcCost, resamplerThdN: thd, drift, residualLoss: residual };
}

/** Print the quality figures as tables (shared by this CLI and bench/run.ts). */
export function printQuality(r: Record<string, unknown>, short: boolean): void {
  console.log('\nPacket-loss concealment: SNR of the output vs the lossless output (music-like signal)');
  console.table(r['plc']);
  console.log('Concealment CPU per render quantum (Node, median, µs)');
  console.table(r['plcCost']);
  console.log('Resampler THD+N (Kaiser-windowed sinc, 16 taps, 512 phases)');
  console.table(r['resamplerThdN']);
  console.log(`Clock drift over ${short ? 10 : 60} simulated minutes (depth ${DEFAULT_DEPTH}, delay 1 + U[0, 0.5) quanta, control at 10 Hz)`);
  console.table((r['drift'] as DriftResult[]).map(({ rate: _rate, ...x }) => x));
  console.log(`Residual frame loss after redundancy (a message over ${ONE_DATAGRAM_BYTES} bytes takes 2 datagrams)`);
  console.table(r['residualLoss']);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const short = process.argv.includes('--short');
  const t0 = performance.now();
  printQuality(await runQualityBench({ short }), short);
  console.log(`(${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}
