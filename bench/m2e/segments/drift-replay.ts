// Replays a playout trace's tap records (bench/m2e/segments/playout-trace.ts) through the drift
// figure's two series (workers/shown-drift.ts) offline: prints each series' slope (and, with
// `points`, its per-second points against it), C a second time from the render count the tap
// kept beside each output-clock reading, and the figure every 5 s, so a figure far from the rig's
// can be traced to A or C, and C's error to the output timestamp's dating or to the render itself.
// Usage: npx tsx bench/m2e/segments/drift-replay.ts /tmp/tutti-playout-trace-N.json [points]
import { readFileSync } from 'node:fs';
import { QUANTUM_MS } from '../../../src/shared/constants.ts';
import { OutputClock, SegmentedLine, ShownDrift, SKIP_SECONDS } from '../../../workers/shown-drift.ts';

type Lag = { seqs: number[]; arrivalMs: number[]; transitMs: number[]; outputClock: { contextS: number[]; wallMs: number[]; renderedQ?: number[]; renderedAtMs?: number[] } };
const file = process.argv[2]!;
const showPoints = process.argv[3] === 'points';
const { lag } = JSON.parse(readFileSync(file, 'utf8')) as { lag: Lag };

function perSecond(ts: number[], vs: number[]): { t: number[]; v: number[] } {
  const out = { t: [] as number[], v: [] as number[] };
  let start = NaN;
  let st = 0, sv = 0, n = 0;
  for (let i = 0; i < ts.length; i++) {
    const t = ts[i]!;
    if (!(t < start + 1000)) {
      if (n) { out.t.push(st / n); out.v.push(sv / n); }
      st = sv = n = 0;
      start = Number.isNaN(start) ? t : start + 1000 * Math.floor((t - start) / 1000);
    }
    st += t; sv += vs[i]!; n++;
  }
  return out;
}
function ols(t: number[], v: number[]): number {
  const n = t.length, mt = t.reduce((a, b) => a + b, 0) / n, mv = v.reduce((a, b) => a + b, 0) / n;
  let sxy = 0, sxx = 0;
  for (let i = 0; i < n; i++) { sxx += (t[i]! - mt) ** 2; sxy += (t[i]! - mt) * (v[i]! - mv); }
  return sxy / sxx;
}
function report(name: string, t: number[], v: number[]) {
  const line = new SegmentedLine(240);
  for (let i = 0; i < t.length; i++) line.push(t[i]!, v[i]!);
  const seg = line.slope();
  console.log(`${name}: ${t.length} s, segmented slope ${seg === null ? '–' : (seg * 1e6).toFixed(1)} ppm, plain OLS ${(ols(t, v) * 1e6).toFixed(1)} ppm`);
  if (showPoints) {
    const s = seg ?? 0;
    for (let i = 0; i < t.length; i++) {
      const step = i ? v[i]! - v[i - 1]! - s * (t[i]! - t[i - 1]!) : 0;
      console.log(`  ${(t[i]! / 1000).toFixed(1)} ${(v[i]! - s * t[i]!).toFixed(3)} step ${step.toFixed(3)}${Math.abs(step) > 0.5 ? ' *' : ''}`);
    }
  }
  return seg;
}

// C: the output clock, as OutputClock takes it (from its first reading, SKIP_SECONDS left out).
const oc = lag.outputClock;
const c0 = oc.contextS.findIndex((x) => x > 0);
const cT: number[] = [], cV: number[] = [];
for (let i = c0; i < oc.contextS.length; i++) {
  const t = oc.wallMs[i]! - oc.wallMs[c0]!;
  cT.push(t); cV.push((oc.contextS[i]! - oc.contextS[c0]!) * 1000 - t);
}
// A: the sender's samples against its capture stamps (only the frames the tap logged).
const aT: number[] = [], aV: number[] = [];
const a0 = lag.arrivalMs[0]!;
for (let i = 0; i < lag.seqs.length; i++) {
  const capture = lag.arrivalMs[i]! - lag.transitMs[i]!;
  aT.push(lag.arrivalMs[i]! - a0);
  aV.push((lag.seqs[i]! - lag.seqs[0]!) * QUANTUM_MS - (capture - (lag.arrivalMs[0]! - lag.transitMs[0]!)));
}
console.log(`${file}: output readings from ${((oc.wallMs[c0]! - a0) / 1000).toFixed(1)} s after the first logged arrival (the tap keeps the last two minutes)`);
const skip = (t: number[], v: number[]) => { const k = t.findIndex((x) => x >= SKIP_SECONDS * 1000); return perSecond(t.slice(k), v.slice(k)); };
const A = skip(aT, aV), C = skip(cT, cV);
const a = report('A (sender samples − capture stamps)', A.t, A.v);
const c = report('C (output context − wall)', C.t, C.v);
// C from the render count the worker read beside each reading (the tap, since 2026-12-07): no latency estimate in it.
if (oc.renderedQ?.length) {
  const rT: number[] = [], rV: number[] = [];
  const r0 = oc.renderedQ.findIndex((q) => q > 0);
  for (let i = r0; i < oc.renderedQ.length; i++) {
    const t = oc.renderedAtMs![i]! - oc.renderedAtMs![r0]!;
    rT.push(t);
    rV.push((oc.renderedQ[i]! - oc.renderedQ[r0]!) * QUANTUM_MS - t);
  }
  const R = skip(rT, rV);
  const r = report('C from the render count (rendered quanta − wall)', R.t, R.v);
  if (a !== null && r !== null) console.log(`drift with the render count's C: ${(((1 + a) / (1 + r) - 1) * 1e6).toFixed(1)} ppm`);
}
if (a !== null && c !== null) console.log(`drift from these: ${(((1 + a) / (1 + c) - 1) * 1e6).toFixed(1)} ppm`);
// The classes themselves, fed in time order (A only with the logged frames), the figure each 5 s.
const out = new OutputClock();
const sd = new ShownDrift();
const noGuard = process.env.NO_GUARD === '1';
let fitAt = -Infinity;
const figures: string[] = [];
let i = 0;
let nextSecond = Math.ceil(lag.arrivalMs[0]! / 1000) * 1000;
for (let k = 0; k < lag.seqs.length; k++) {
  const at = lag.arrivalMs[k]!;
  for (; i < oc.contextS.length && oc.wallMs[i]! <= at; i++) {
    // As the worker does: a fit reading every 240 ms, each reading's claimed latency (from the
    // render count the tap kept; its frame base is a constant, which the usual claim takes out).
    const fit = !(oc.wallMs[i]! - fitAt < 240);
    if (fit) fitAt = oc.wallMs[i]!;
    const claimed = oc.renderedQ ? oc.renderedQ[i]! * QUANTUM_MS - oc.contextS[i]! * 1000 + oc.wallMs[i]! - oc.renderedAtMs![i]! : NaN;
    out.add(oc.contextS[i]!, oc.wallMs[i]!, noGuard ? NaN : claimed, fit);
  }
  sd.add(lag.seqs[k]!, Math.round((at - lag.transitMs[k]!) * 1000) >>> 0, at);
  if (at >= nextSecond) {
    const f = sd.shown(out);
    const c = out.rate();
    if (f.ppm !== null && c !== null && Math.round((at - a0) / 1000) % 5 === 0) figures.push(`${Math.round((at - a0) / 1000)}s ${f.ppm} (C ${(c * 1e6).toFixed(1)}, A ${(((1 + f.ppm * 1e-6) * (1 + c) - 1) * 1e6).toFixed(1)})`);
    nextSecond += 1000;
  }
}
console.log(`figure (s after the first logged arrival): ${figures.join(', ')}; C seconds left out as misdated: ${out.misdatedSeconds}; C over what the fit kept ${((out.line.slope() ?? NaN) * 1e6).toFixed(1)} ppm over ${(out.line.span() / 1000).toFixed(0)} s`);
