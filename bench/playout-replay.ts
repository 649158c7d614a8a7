// `npx tsx bench/playout-replay.ts [checkout]`: replays seeded network scenarios (jitter, loss,
// sender stalls, clock offsets, automatic and manual depth) through a checkout's own JitterWriter,
// Mixer and DepthController on a virtual clock, and prints per scenario a hash of every output
// sample and of every control decision. Run it in two checkouts (default: this one): equal lines
// mean the two play bit-identical audio, so a refactor of the playout path changed no behaviour,
// whatever a noisy machine makes of the browser bench. No browser; about 5 s.
import { join, resolve } from 'node:path';
import { mulberry32 } from '../tests/unit/prng.ts';

const root = resolve(process.argv[2] ?? join(import.meta.dirname, '..'));

// The other checkout's modules, typed as this one's (the replay needs only their common API).
(globalThis as { __TUTTI_TEST__?: boolean }).__TUTTI_TEST__ = false;
const C: typeof import('../src/shared/constants.ts') = await import(`${root}/src/shared/constants.ts`);
const M: typeof import('../src/shared/memory-layout.ts') = await import(`${root}/src/shared/memory-layout.ts`);
const W: typeof import('../src/shared/wire.ts') = await import(`${root}/src/shared/wire.ts`);
const { DepthController }: typeof import('../workers/depth-controller.ts') = await import(`${root}/workers/depth-controller.ts`);
const { JitterWriter }: typeof import('../workers/jitter-writer.ts') = await import(`${root}/workers/jitter-writer.ts`);
const { Mixer }: typeof import('../worklets/mixer.ts') = await import(`${root}/worklets/mixer.ts`);
const { QUANTUM_FRAMES, QUANTUM_SAMPLES, SAMPLE_RATE } = C;

/** One replay: sender clock offset, delay 1 + U[0, jitter) quanta, random loss, periodic sender stalls. */
interface Sc { name: string; ppm: number; seconds: number; seed: number; depth: number; adaptive: boolean; jitter: number; loss: number; stallEvery: number; stallQuanta: number; retarget?: { at: number; depth: number } }
function run(s: Sc): Record<string, string | number> {
  const v = new M.PlaybackViews(M.createPlaybackMemory());
  const mixer = new Mixer(v);
  const ctl = new DepthController(s.depth, s.adaptive);
  const w = new JitterWriter(v, 0, ctl.target);
  const rng = mulberry32(s.seed);
  const ratio = 1 + s.ppm * 1e-6;
  const bytes = new Uint8Array(W.MAX_PACKET_BYTES);
  const view = new DataView(bytes.buffer);
  const src = new Float32Array(QUANTUM_SAMPLES);
  const h = W.newHeader();
  const outL = new Float32Array(QUANTUM_FRAMES);
  const outR = new Float32Array(QUANTUM_FRAMES);
  const ticks = Math.round((s.seconds * SAMPLE_RATE) / QUANTUM_FRAMES);
  const controlEvery = (0.1 * SAMPLE_RATE) / QUANTUM_FRAMES;
  const fSeq: number[] = []; const fAt: number[] = [];
  let nextSeq = 0;
  let nextControl = 0;
  let hash = 2166136261 >>> 0; // FNV-1a over every output sample's bits
  let ctlHash = 2166136261 >>> 0; // and over every fill window, target and rate
  const u32L = new Uint32Array(outL.buffer), u32R = new Uint32Array(outR.buffer);
  const mix = (x: number, hh: number) => Math.imul(hh ^ x, 16777619) >>> 0;
  let stallUntil = -1;
  for (let t = 0; t < ticks; t++) {
    if (s.stallEvery > 0 && t % s.stallEvery === s.stallEvery - 1) stallUntil = t + s.stallQuanta;
    while (nextSeq / ratio <= t) {
      if (rng() >= s.loss) {
        fSeq.push(nextSeq);
        const base = nextSeq / ratio + 1 + s.jitter * rng();
        fAt.push(t < stallUntil ? Math.max(base, stallUntil) : base);
      }
      nextSeq++;
    }
    for (;;) {
      let best = -1;
      for (let i = 0; i < fAt.length; i++) if (fAt[i]! <= t && (best < 0 || fAt[i]! < fAt[best]!)) best = i;
      if (best < 0) break;
      const seq = fSeq[best]!;
      for (let i = 0; i < QUANTUM_SAMPLES; i++) src[i] = 0.25 * Math.sin((seq * QUANTUM_FRAMES + (i >> 1)) / 7);
      const len = W.encodePacket(bytes, view, src, 2, 3, 0, 0);
      view.setUint32(W.HEADER.SEQUENCE, seq >>> 0, true);
      const pv = new DataView(bytes.buffer, 0, len);
      if (W.decodeHeader(pv, h) !== W.Reject.OK) throw new Error('rejected');
      w.accept(h, pv);
      ctl.onArrival(h.sequence, Atomics.load(v.i32, M.PLAY_I32.QUANTA));
      fSeq.splice(best, 1); fAt.splice(best, 1);
    }
    if (t >= nextControl) {
      nextControl += controlEvery;
      const nowMs = (t * QUANTUM_FRAMES * 1000) / SAMPLE_RATE;
      if (s.retarget && nowMs >= s.retarget.at * 1000 && ctl.target !== s.retarget.depth && !ctl.adaptive) ctl.setDepth(s.retarget.depth, false);
      for (let low = w.nextFillWindow(); low !== null; low = w.nextFillWindow()) { ctl.onWindow(low / QUANTUM_FRAMES, w.windowTrimmed); ctlHash = mix(low | 0, ctlHash); }
      ctl.update(nowMs, w.counters.late + w.playCounter(M.PEER_I32.UNDERRUNS));
      if (ctl.target !== w.depthTarget) w.setDepth(ctl.target);
      w.setRate(ctl.rate);
      ctlHash = mix(ctl.target, ctlHash); ctlHash = mix(Math.round(ctl.rate * 1e12) | 0, ctlHash);
    }
    mixer.render(outL, outR);
    for (let i = 0; i < QUANTUM_FRAMES; i++) { hash = mix(u32L[i]!, hash); hash = mix(u32R[i]!, hash); }
  }
  return { name: s.name, hash: hash.toString(16), ctlHash: ctlHash.toString(16), target: ctl.target, rate: ctl.rate, drift: ctl.drift, resyncs: w.counters.resyncs, late: w.counters.late, underruns: w.playCounter(M.PEER_I32.UNDERRUNS), missed: w.playCounter(M.PEER_I32.MISSED) };
}
const scs: Sc[] = [
  { name: 'auto jitter 0.5 +200ppm', ppm: 200, seconds: 120, seed: 1, depth: 8, adaptive: true, jitter: 0.5, loss: 0, stallEvery: 0, stallQuanta: 0 },
  { name: 'auto jitter 4 -1000ppm loss 2%', ppm: -1000, seconds: 120, seed: 2, depth: 8, adaptive: true, jitter: 4, loss: 0.02, stallEvery: 0, stallQuanta: 0 },
  { name: 'auto stalls 30q every 5s', ppm: 100, seconds: 120, seed: 3, depth: 8, adaptive: true, jitter: 1.5, loss: 0.005, stallEvery: 1875, stallQuanta: 30 },
  { name: 'manual 8 stalls, retarget 4', ppm: 1000, seconds: 120, seed: 4, depth: 8, adaptive: false, jitter: 2, loss: 0.01, stallEvery: 3000, stallQuanta: 20, retarget: { at: 60, depth: 4 } },
  { name: 'manual 3 jitter 3', ppm: -300, seconds: 60, seed: 5, depth: 3, adaptive: false, jitter: 3, loss: 0, stallEvery: 0, stallQuanta: 0 },
];
for (const s of scs) console.log(JSON.stringify(run(s)));
