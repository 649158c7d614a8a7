// `npx tsx bench/device-rhythm.ts`: the playout path (the real JitterWriter, Mixer and
// DepthController on a virtual clock) against the device rhythm measured on the bench rig
// (docs/BENCHMARKS.md, "Where the underruns come from"): the sender's capture arrives in
// 1024-frame buffers (8 quanta at once every 21.3 ms) whose delivery runs ~1000 ppm early for
// ~21 s, then one comes 21.3 ms late with the next; the capture stamps stay regular (±2 ms); our
// output renders 4 quanta at a time on a clock 150 ppm off the wall clock. Printed per run: the
// glitches and the delay from capture stamp to playout (what a listener's mouth-to-ear delay
// follows) over the last minute, with the controller fed the packets' lag (as the network worker
// does) and without it (the controller before the "Slow lateness" rule); then a join's first
// 30 s by where in the rhythm it lands (glitches, and the delay over 3-23 s, when set-up C
// records), without and with the controller's start-up floor of one burst of arrivals; then
// capture buffers handed over late now and then (workers/late-hand-overs.ts).
// Exported for tests/unit/device-rhythm.test.ts.

import { fileURLToPath } from 'node:url';
import { QUANTUM_FRAMES, QUANTUM_MS } from '../src/shared/constants.ts';
import { PEER_I32, PLAY_I32, PlaybackViews, createPlaybackMemory } from '../src/shared/memory-layout.ts';
import { HEADER, Reject, decodeHeader } from '../src/shared/wire.ts';
import { preEncodedPacket } from './quality.ts';
import { DepthController } from '../workers/depth-controller.ts';
import { JitterWriter } from '../workers/jitter-writer.ts';
import { Mixer } from '../worklets/mixer.ts';
import { mulberry32 } from '../tests/unit/prng.ts';

export interface RhythmOptions {
  seconds: number;
  seed: number;
  /** Feed the controller each packet's lag (arrival − capture stamp). */
  lag: boolean;
  /** Depth at the join, and automatic or manual. */
  depth: number;
  adaptive: boolean;
  /** Period of the delivery sawtooth, s (0: no sawtooth, regular buffers). */
  sawSeconds: number;
  /** Random extra delay per capture buffer, ms (network and scheduling). */
  jitterMs: number;
  /** Where in the sawtooth the join lands, s (0: the first late buffer comes a whole period in). */
  phaseS?: number;
  /** Feed the controller the arrival times (its start-up floor of one burst); default yes. */
  bursts?: boolean;
  /** When the sender's microphone began, on the simulation's clock (ms; the stream begins at 0): the controller's micSinceMs. Default unknown. */
  micSinceMs?: number;
  /** Our output device's clock against the wall clock (the sender's samples keep wall time), ppm. Default 150. */
  outPpm?: number;
  /** Publish the controller's sustainedAbove() (the start-up's burst left to the rate); false: trimAbove() alone, as before 2026-12-07. Default yes. */
  sustainedAboveStart?: boolean;
  /** A passing bump of extra delivery delay at the start, ms at its peak (0.5 s → peak at 2 s → gone at 5.5 s; 5 of 24 traced joins on the rig). Default none. */
  bumpMs?: number;
  /**
   * Capture buffers handed over late and then caught up (the next comes on its time, so two arrive
   * together; the lag does not step): per minute on average, each late by minMs–maxMs. The rig's
   * phase traces (docs/BENCHMARKS.md, "Late hand-overs") saw 0–4 a minute in a quiet hour, 7–19 in
   * a busy one, mostly 12–27 ms late (up to 57), often in runs of several seconds. Default none.
   */
  hiccups?: { perMinute: number; minMs: number; maxMs: number };
}

export interface RhythmResult {
  underruns: number;
  late: number;
  trimmed: number;
  /** Capture stamp → playout over the last 60 s, ms: mean, lowest, highest. */
  delayMean: number;
  delayMin: number;
  delayMax: number;
  target: number;
  relief: number;
  /** The lowest fill window low point over the last 60 s, quanta: what is left at the step's bottom. */
  lowMin: number;
  /** Underruns and late frames in the first 30 s (the join, before the rhythm has been seen twice). */
  startGlitches: number;
  /** Quanta trimmed in the first 30 s. */
  startTrimmed: number;
  /** Capture stamp → playout over the first 20 s after the first 3 s, ms (what set-up C records). */
  startDelayMean: number;
}

const BUFFER_QUANTA = 8;
const RENDER_BURST = 4;
/** Base delivery delay after a buffer's last frame is captured, ms. */
const BASE_MS = 1;

/** The start's passing bump (RhythmOptions.bumpMs) for a buffer captured at `ms`: a triangle from 0.5 s to 5.5 s, highest at 2 s. */
function bump(ms: number, peakMs: number): number {
  if (ms <= 500 || ms >= 5500) return 0;
  return ms < 2000 ? (peakMs * (ms - 500)) / 1500 : (peakMs * (5500 - ms)) / 3500;
}

export function simulateRhythm(o: RhythmOptions): RhythmResult {
  const v = new PlaybackViews(createPlaybackMemory());
  const mixer = new Mixer(v);
  const ctl = new DepthController(o.depth, o.adaptive);
  ctl.micSinceMs = o.micSinceMs ?? NaN;
  const w = new JitterWriter(v, 0, ctl.target);
  const rng = mulberry32(o.seed);
  const { view, pv, h } = preEncodedPacket();
  const outL = new Float32Array(QUANTUM_FRAMES);
  const outR = new Float32Array(QUANTUM_FRAMES);
  const bufferMs = BUFFER_QUANTA * QUANTUM_MS;
  const outRatio = 1 + (o.outPpm ?? 150) * 1e-6;
  const endMs = o.seconds * 1000;
  const tailMs = endMs - 60_000;
  let buffer = 0;
  let nextDelivery = NaN;
  let stampNoise = 0;
  let rendered = 0;
  let nextControlMs = 0;
  let sum = 0;
  let n = 0;
  let min = Infinity;
  let max = -Infinity;
  let lowMin = Infinity;
  let base = { underruns: 0, late: 0, trimmed: 0 };
  let startGlitches = -1;
  let startTrimmed = -1;
  let startSum = 0;
  let startN = 0;
  // Step through wall time in 0.25 ms ticks: deliveries, renders and control happen in order.
  for (let ms = 0; ms < endMs; ms += 0.25) {
    // Sender: buffer b holds sequences 8b…8b+7, its last frame captured at (b + 1) × 21.3 ms.
    for (;;) {
      if (Number.isNaN(nextDelivery)) {
        const captured = (buffer + 1) * bufferMs;
        const early = o.sawSeconds > 0 ? ((captured / 1000 + (o.phaseS ?? 0)) % o.sawSeconds) * 1 : 0; // 1000 ppm: 1 ms per s
        nextDelivery = captured + BASE_MS - early + o.jitterMs * rng() + bump(captured, o.bumpMs ?? 0);
        if (o.hiccups && rng() < (o.hiccups.perMinute * bufferMs) / 60_000) nextDelivery += o.hiccups.minMs + (o.hiccups.maxMs - o.hiccups.minMs) * rng();
        stampNoise = (rng() - 0.5) * 4;
      }
      if (nextDelivery > ms) break;
      for (let k = 0; k < BUFFER_QUANTA; k++) {
        const seq = buffer * BUFFER_QUANTA + k;
        view.setUint32(HEADER.SEQUENCE, seq >>> 0, true);
        if (decodeHeader(pv, h) !== Reject.OK) throw new Error('packet rejected');
        w.accept(h, pv);
        const stampMs = seq * QUANTUM_MS + stampNoise;
        const lag = (ms - stampMs) / QUANTUM_MS;
        ctl.onArrival(h.sequence, Atomics.load(v.i32, PLAY_I32.QUANTA), o.lag ? lag : NaN, o.bursts === false ? NaN : ms);
        if (o.lag) ctl.onLag(lag);
      }
      buffer++;
      nextDelivery = NaN;
    }
    // Our output: 4 quanta at once whenever its clock has them due.
    const due = Math.floor((ms * outRatio) / QUANTUM_MS / RENDER_BURST) * RENDER_BURST;
    while (rendered < due) {
      mixer.render(outL, outR);
      rendered++;
      if (ms >= 3000 && ms < 23_000) {
        const playedSeq = Atomics.load(v.i32, v.peerI32(0, PEER_I32.PLAY_POS)) / QUANTUM_FRAMES;
        startSum += ms + (rendered - due + RENDER_BURST) * QUANTUM_MS - playedSeq * QUANTUM_MS;
        startN++;
      }
      if (ms >= tailMs) {
        // The frame just played and the wall time it is heard (the burst's quanta play one after another).
        const playedSeq = Atomics.load(v.i32, v.peerI32(0, PEER_I32.PLAY_POS)) / QUANTUM_FRAMES;
        const heardMs = ms + (rendered - due + RENDER_BURST) * QUANTUM_MS;
        const d = heardMs - playedSeq * QUANTUM_MS;
        sum += d;
        n++;
        if (d < min) min = d;
        if (d > max) max = d;
      }
    }
    if (ms >= nextControlMs) {
      nextControlMs += 100;
      for (let low = w.nextFillWindow(); low !== null; low = w.nextFillWindow()) {
        ctl.onWindow(low / QUANTUM_FRAMES, w.windowTrimmed);
        if (ms >= tailMs && low / QUANTUM_FRAMES < lowMin) lowMin = low / QUANTUM_FRAMES;
      }
      ctl.update(ms, w.counters.late + w.playCounter(PEER_I32.UNDERRUNS));
      if (ctl.target !== w.depthTarget) w.setDepth(ctl.target);
      w.setTrimAbove(ctl.trimAbove());
      w.setSustainedAbove(o.sustainedAboveStart === false ? ctl.trimAbove() : ctl.sustainedAbove());
      w.setRate(ctl.rate);
      if (ms < 30_000) {
        startGlitches = w.counters.late + w.playCounter(PEER_I32.UNDERRUNS);
        startTrimmed = w.playCounter(PEER_I32.TRIMMED);
      }
      if (ms < tailMs) base = { underruns: w.playCounter(PEER_I32.UNDERRUNS), late: w.counters.late, trimmed: w.playCounter(PEER_I32.TRIMMED) };
    }
  }
  return {
    underruns: w.playCounter(PEER_I32.UNDERRUNS) - base.underruns,
    late: w.counters.late - base.late,
    trimmed: w.playCounter(PEER_I32.TRIMMED) - base.trimmed,
    delayMean: sum / n,
    delayMin: min,
    delayMax: max,
    target: ctl.target,
    relief: ctl.relief(),
    lowMin,
    startGlitches,
    startTrimmed,
    startDelayMean: startSum / startN,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = [];
  for (const sc of [
    { name: 'rig rhythm, automatic', sawSeconds: 21.3, jitterMs: 0.5, adaptive: true, depth: 8 },
    { name: 'rig rhythm + 3 ms jitter, automatic', sawSeconds: 21.3, jitterMs: 3, adaptive: true, depth: 8 },
    { name: 'regular buffers, automatic', sawSeconds: 0, jitterMs: 0.5, adaptive: true, depth: 8 },
    { name: 'rig rhythm, manual 10', sawSeconds: 21.3, jitterMs: 0.5, adaptive: false, depth: 10 },
    { name: 'rig rhythm + 3 ms jitter, manual 10', sawSeconds: 21.3, jitterMs: 3, adaptive: false, depth: 10 },
  ]) {
    for (const lag of [false, true]) {
      const r = simulateRhythm({ seconds: 180, seed: 1, lag, ...sc });
      const f = (x: number) => Math.round(x * 10) / 10;
      rows.push({ scenario: sc.name, 'lag fed': lag, underruns: r.underruns, late: r.late, trimmed: r.trimmed, 'delay mean ms': f(r.delayMean), 'delay min–max ms': `${f(r.delayMin)}–${f(r.delayMax)}`, target: r.target, relief: f(r.relief), 'lowest low point q': f(r.lowMin) });
    }
  }
  console.log('Playout against the rig\'s device rhythm (180 s simulated; figures over the last 60 s):');
  console.table(rows);
  // The join: where in the sawtooth it lands decides when the first late buffer comes.
  const starts = [];
  for (const phaseS of [0, 4, 8, 12, 16, 20]) {
    for (const jitterMs of [0.5, 3]) {
      const common = { seconds: 90, seed: 11, lag: true, sawSeconds: 21.3, jitterMs, adaptive: true, depth: 8, phaseS };
      const before = simulateRhythm({ ...common, bursts: false });
      const r = simulateRhythm(common);
      const f = (x: number) => Math.round(x * 10) / 10;
      starts.push({
        'join at phase s': phaseS,
        'jitter ms': jitterMs,
        'glitches 0-30 s, no floor / floor': `${before.startGlitches} / ${r.startGlitches}`,
        'delay 3-23 s': `${f(before.startDelayMean)} / ${f(r.startDelayMean)}`,
        'glitches 30-90 s': `${before.underruns + before.late} / ${r.underruns + r.late}`,
        'delay 30-90 s': `${f(before.delayMean)} / ${f(r.delayMean)}`,
      });
    }
  }
  console.log('The first 90 s of a join (automatic depth, lag fed), by where in the rhythm it lands, without and with the start-up floor of one burst (ms):');
  console.table(starts);
  // A stream that began with the sender's microphone (at the top of its ramp: phase 0), with the
  // microphone's start known (MemberState.micSince) or not.
  const fresh = [];
  for (const [jitterMs, bumpMs] of [[0.5, 0], [3, 0], [0.5, 16], [3, 16]] as const) {
    const common = { seconds: 90, seed: 11, lag: true, sawSeconds: 21.3, jitterMs, adaptive: true, depth: 8, phaseS: 0, bumpMs };
    const unknown = simulateRhythm(common);
    const known = simulateRhythm({ ...common, micSinceMs: -1000 });
    const f = (x: number) => Math.round(x * 10) / 10;
    fresh.push({
      'jitter ms': jitterMs,
      'bump at start ms': bumpMs,
      'glitches 0-30 s, start unknown / known': `${unknown.startGlitches} / ${known.startGlitches}`,
      'delay 3-23 s': `${f(unknown.startDelayMean)} / ${f(known.startDelayMean)}`,
      'glitches 30-90 s': `${unknown.underruns + unknown.late} / ${known.underruns + known.late}`,
      'delay 30-90 s': `${f(unknown.delayMean)} / ${f(known.delayMean)}`,
    });
  }
  console.log('A stream that began with the sender\'s microphone (phase 0), without and with the microphone\'s start known (ms):');
  console.table(fresh);
  // Capture buffers handed over late and caught up at once, as the rig's phase traces saw them.
  const handOvers = [];
  for (const perMinute of [0, 2, 6, 12]) {
    let glitches = 0;
    let delay = 0;
    const targets = [];
    const lows = [];
    const seeds = 6;
    for (let seed = 1; seed <= seeds; seed++) {
      const r = simulateRhythm({ seconds: 240, seed, lag: true, sawSeconds: 21.3, jitterMs: 1, adaptive: true, depth: 8, phaseS: seed * 3, hiccups: perMinute > 0 ? { perMinute, minMs: 5, maxMs: 22 } : undefined });
      glitches += r.underruns + r.late;
      delay += r.delayMean / seeds;
      targets.push(r.target);
      lows.push(r.lowMin.toFixed(1));
    }
    handOvers.push({ 'late hand-overs a minute': perMinute, 'glitches (6 × the last 60 s)': glitches, 'delay mean ms': Math.round(delay * 10) / 10, targets: targets.join(' '), 'lowest low points q': lows.join(' ') });
  }
  console.log('Capture buffers handed over 5-22 ms late, the next on time (automatic depth, lag fed, 1 ms jitter; six joins of 240 s, figures over the last 60 s):');
  console.table(handOvers);
}
