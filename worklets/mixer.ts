// Playback-worklet side of the de-jitter rings: each render quantum, takes every active peer's
// frames from its ring into a small FIFO (concealing what is missing), plays the FIFO at the rate
// the network worker steers (drift compensation, click-free depth changes), applies per-peer gain
// and mute, sums, and publishes counters and meters. Real-time code: all state is preallocated,
// render() allocates nothing.
// Imported by worklets/playback.worklet.ts; unit-tested in Node.

import { JITTER_SLOTS, MAX_PEERS, MAX_RATE_DEVIATION, METER_DECAY_PER_QUANTUM as METER_DECAY, QUANTUM_FRAMES, TRIM_EXCESS } from '../src/shared/constants.ts';
import { FILL_RING, FILL_WINDOW, PEER_F32, PEER_I32, PLAY_F32, PLAY_I32, PeerState, PlaybackViews, slotOf } from '../src/shared/memory-layout.ts';
import { seqDiff } from '../src/shared/seq.ts';
import { Concealer, Fit, PLC_FADE_QUANTA, PLC_WINDOW } from './plc.ts';
import { HALF, SincTable } from './resampler.ts';

/** Per-peer playout FIFO, in frames: history for concealment and the resampler, plus what is being played. */
const FIFO_FRAMES = 2048;
/** History kept before the read position when the FIFO is compacted. */
const KEEP = PLC_WINDOW + HALF;
/**
 * Concealment fits allowed per render quantum across all peers (a fit runs when a peer's gap
 * starts): FULL fits (about 0.5 ms each, stereo, on this machine), then LIGHT ones (about
 * 55 µs); gaps beyond both start silent. Bounds the worst case, everyone losing the same
 * quantum, to about 0.9 ms of the 2.67 ms quantum (`npm run bench`, concealment CPU table).
 */
const MAX_FULL_FITS_PER_QUANTUM = 1;
const MAX_LIGHT_FITS_PER_QUANTUM = 6;
/** Fill windows (43 ms each: 340 ms) the low point must stay above target + TRIM_EXCESS before a trim. */
const TRIM_SUSTAINED_WINDOWS = 8;
/** Per-quantum slew of the applied rate toward the controller's (time constant ≈ 32 quanta = 85 ms). */
const RATE_SLEW = 1 / 32;

export class Mixer {
  private readonly cursor = new Uint32Array(MAX_PEERS);
  private readonly first = new Uint32Array(MAX_PEERS);
  private readonly ackGen = new Int32Array(MAX_PEERS);
  private readonly started = new Uint8Array(MAX_PEERS);
  /** After a gap longer than the concealment fade: wait (silent) until the target depth is buffered again. */
  private readonly outage = new Uint8Array(MAX_PEERS);
  /** The previous pull was an underrun (the cursor waited). */
  private readonly holding = new Uint8Array(MAX_PEERS);
  private readonly lastGain = new Float32Array(MAX_PEERS);
  /** Read position in the FIFO (fractional frames) and write position (frames). */
  private readonly rd = new Float64Array(MAX_PEERS);
  private readonly wr = new Int32Array(MAX_PEERS);
  private readonly rate = new Float64Array(MAX_PEERS);
  /** Lowest fill of the current window (frames) and quanta rendered in it. */
  private readonly fillMin = new Float64Array(MAX_PEERS);
  private readonly fillQuanta = new Int32Array(MAX_PEERS);
  private readonly fillCount = new Int32Array(MAX_PEERS);
  /** Consecutive fill windows whose low point was more than TRIM_EXCESS over the target, and the smallest excess (quanta) among them. */
  private readonly highWindows = new Int32Array(MAX_PEERS);
  private readonly highExcess = new Int32Array(MAX_PEERS);
  /** Quanta to skip at the next frame taken (0: none); the skip is spliced in with a crossfade. */
  private readonly skip = new Int32Array(MAX_PEERS);
  /** Fade-in weights of a splice (raised cosine over one quantum). */
  private readonly xfade = new Float32Array(QUANTUM_FRAMES);
  /** The frame a splice fades in, copied out of its slot first (see copySlot). */
  private readonly spliceFrame = new Float32Array(QUANTUM_FRAMES * 2);
  private readonly fifo: Float32Array[] = [];
  private readonly plc: Concealer[] = [];
  private readonly sinc = new SincTable();
  private fullFitsLeft = 0;
  private lightFitsLeft = 0;
  private masterPeak = 0;
  private clipped = 0;
  private quanta = 0;

  constructor(private readonly v: PlaybackViews) {
    const store = new Float32Array(MAX_PEERS * FIFO_FRAMES * 2);
    for (let p = 0; p < MAX_PEERS; p++) {
      this.ackGen[p] = Atomics.load(v.i32, v.peerI32(p, PEER_I32.RESYNC_GEN));
      this.fifo.push(store.subarray(p * FIFO_FRAMES * 2, (p + 1) * FIFO_FRAMES * 2));
      this.plc.push(new Concealer());
    }
    this.rate.fill(1);
    this.fillMin.fill(Infinity);
    for (let f = 0; f < QUANTUM_FRAMES; f++) this.xfade[f] = 0.5 - 0.5 * Math.cos((Math.PI * (f + 0.5)) / QUANTUM_FRAMES);
  }

  /** Render one quantum into `outL`/`outR` (QUANTUM_FRAMES each); `outR` may equal `outL` for mono output. */
  render(outL: Float32Array, outR: Float32Array): void {
    const v = this.v;
    const i32 = v.i32;
    const f32 = v.f32;
    outL.fill(0);
    if (outR !== outL) outR.fill(0);
    this.fullFitsLeft = MAX_FULL_FITS_PER_QUANTUM;
    this.lightFitsLeft = MAX_LIGHT_FITS_PER_QUANTUM;
    for (let p = 0; p < MAX_PEERS; p++) {
      const stateIdx = v.peerI32(p, PEER_I32.STATE);
      const state = Atomics.load(i32, stateIdx);
      if (state === PeerState.FREE) continue;
      if (state === PeerState.CLOSING) {
        this.started[p] = 0;
        this.ackGen[p] = Atomics.load(i32, v.peerI32(p, PEER_I32.RESYNC_GEN));
        this.lastGain[p] = 0;
        this.rate[p] = 1;
        f32[v.peerF32(p, PEER_F32.PEAK)] = 0;
        Atomics.compareExchange(i32, stateIdx, PeerState.CLOSING, PeerState.FREE);
        continue;
      }
      this.adoptResync(p);
      if (this.started[p] === 0) continue;

      // Rate steering: slew toward the controller's rate, clamped (a bad value cannot run away).
      let target = f32[v.peerF32(p, PEER_F32.RATE)]!;
      if (!(target >= 1 - MAX_RATE_DEVIATION)) target = 1 - MAX_RATE_DEVIATION;
      else if (target > 1 + MAX_RATE_DEVIATION) target = 1 + MAX_RATE_DEVIATION;
      let r = this.rate[p]!;
      r += (target - r) * RATE_SLEW;
      if (Math.abs(r - 1) < 1e-7 && target === 1) r = 1; // settle exactly: bit-exact playout again
      this.rate[p] = r;

      // Take frames from the ring until the kernel has what the last output frame needs.
      const fifo = this.fifo[p]!;
      let rd = this.rd[p]!;
      while (Math.floor(rd + (QUANTUM_FRAMES - 1) * r) + HALF >= this.wr[p]!) this.pull(p, fifo);

      const gainTarget = Atomics.load(i32, v.peerI32(p, PEER_I32.MUTED)) !== 0 ? 0 : f32[v.peerF32(p, PEER_F32.GAIN)]!;
      let g = this.lastGain[p]!;
      const step = (gainTarget - g) / QUANTUM_FRAMES;
      let peak = 0;
      const sinc = this.sinc;
      for (let f = 0; f < QUANTUM_FRAMES; f++) {
        g += step;
        const x = rd + f * r;
        const l = sinc.interpolate(fifo, x, 0) * g;
        const rr = sinc.interpolate(fifo, x, 1) * g;
        outL[f]! += l;
        if (outR !== outL) outR[f]! += rr;
        else outL[f]! += rr;
        const a = l > 0 ? l : -l;
        const b = rr > 0 ? rr : -rr;
        if (a > peak) peak = a;
        if (b > peak) peak = b;
      }
      this.lastGain[p] = gainTarget;
      rd += QUANTUM_FRAMES * r;
      // Compact: keep KEEP frames of history before the read position.
      if (this.wr[p]! + 3 * QUANTUM_FRAMES > FIFO_FRAMES) {
        const shift = Math.floor(rd) - KEEP;
        fifo.copyWithin(0, 2 * shift, 2 * this.wr[p]!);
        rd -= shift;
        this.wr[p] = this.wr[p]! - shift;
      }
      this.rd[p] = rd;
      const pk = v.peerF32(p, PEER_F32.PEAK);
      f32[pk] = Math.max(peak, f32[pk]! * METER_DECAY);
      // Publish where playout is, in frames of the sender's stream (see PEER_I32.PLAY_POS).
      const pending = Math.round(this.wr[p]! - rd);
      Atomics.store(i32, v.peerI32(p, PEER_I32.PLAY_POS), (Math.imul(this.cursor[p]!, QUANTUM_FRAMES) - pending) | 0);
      // Fill right after consuming is the low point of the cycle; publish each window's minimum.
      const newest = Atomics.load(i32, v.peerI32(p, PEER_I32.NEWEST)) >>> 0;
      const fill = (seqDiff(newest, this.cursor[p]!) + 1) * QUANTUM_FRAMES + pending;
      if (fill < this.fillMin[p]!) this.fillMin[p] = fill;
      if (++this.fillQuanta[p]! >= FILL_WINDOW) {
        const n = this.fillCount[p]!;
        Atomics.store(i32, v.peerI32(p, PEER_I32.FILL_MIN + (n % FILL_RING)), Math.round(this.fillMin[p]!));
        Atomics.store(i32, v.peerI32(p, PEER_I32.FILL_TRIMMED + (n % FILL_RING)), Atomics.load(i32, v.peerI32(p, PEER_I32.TRIMMED)));
        this.watchExcess(p);
        this.fillCount[p] = n + 1;
        Atomics.store(i32, v.peerI32(p, PEER_I32.FILL_COUNT), n + 1);
        this.fillQuanta[p] = 0;
        this.fillMin[p] = Infinity;
      }
    }
    this.finishMaster(outL, outR);
  }

  /**
   * Append one quantum at the FIFO's write position: the frame for the cursor if it is there;
   * otherwise concealment, and the cursor moves on only if something newer has arrived (the frame
   * is lost or late). If nothing newer has, the buffer ran dry: conceal and wait (an underrun, which
   * adds one quantum of delay instead of making the next frames late).
   */
  private pull(p: number, fifo: Float32Array): void {
    const v = this.v;
    const i32 = v.i32;
    let cur = this.cursor[p]!;
    const at = this.wr[p]!;
    const plc = this.plc[p]!;
    this.wr[p] = at + QUANTUM_FRAMES;
    if (seqDiff(cur, this.first[p]!) < 0) {
      // Before the stream's first frame (the initial depth): silence, nothing is missing.
      fifo.fill(0, 2 * at, 2 * (at + QUANTUM_FRAMES));
      this.cursor[p] = (cur + 1) >>> 0;
      Atomics.store(i32, v.peerI32(p, PEER_I32.CURSOR), (cur + 1) | 0);
      return;
    }
    if (this.outage[p] !== 0) {
      // Rebuffer after an outage: stay silent until the target depth has arrived again.
      const queued = seqDiff(Atomics.load(i32, v.peerI32(p, PEER_I32.NEWEST)) >>> 0, cur) + 1;
      if (queued < Atomics.load(i32, v.peerI32(p, PEER_I32.TARGET_DEPTH))) {
        fifo.fill(0, 2 * at, 2 * (at + QUANTUM_FRAMES));
        Atomics.add(i32, v.peerI32(p, PEER_I32.UNDERRUNS), 1);
        return;
      }
      this.outage[p] = 0;
    }
    const slot = slotOf(cur);
    if (Atomics.load(i32, v.tag(p, slot)) === (cur | 0) && this.copySlot(p, slot, cur, fifo, 2 * at)) {
      // (Resuming after an underrun takes no trim here: what is queued right after a burst arrives
      // is the top of the arrival sawtooth, while the target is a low point. A stall's backlog is
      // trimmed by watchExcess once the low point shows it.)
      this.holding[p] = 0;
      Atomics.store(i32, v.taken(p, slot), cur | 0);
      if (this.skip[p]! > 0) cur = this.splice(p, fifo, at, cur);
      Atomics.add(i32, v.peerI32(p, PEER_I32.PLAYED), 1);
      plc.recover(fifo, at);
      this.outage[p] = 0;
      this.cursor[p] = (cur + 1) >>> 0;
      Atomics.store(i32, v.peerI32(p, PEER_I32.CURSOR), (cur + 1) | 0);
      return;
    }
    const ahead = seqDiff(Atomics.load(i32, v.peerI32(p, PEER_I32.NEWEST)) >>> 0, cur);
    let fit: Fit = Fit.CONTINUE;
    if (plc.run === 0) fit = this.fullFitsLeft-- > 0 ? Fit.FULL : this.lightFitsLeft-- > 0 ? Fit.LIGHT : Fit.NONE;
    plc.conceal(fifo, at, QUANTUM_FRAMES, at, fit);
    if (plc.run <= PLC_FADE_QUANTA) Atomics.add(i32, v.peerI32(p, PEER_I32.CONCEALED), 1);
    if (ahead > 0) {
      Atomics.add(i32, v.peerI32(p, PEER_I32.MISSED), 1);
      this.cursor[p] = (cur + 1) >>> 0;
      Atomics.store(i32, v.peerI32(p, PEER_I32.CURSOR), (cur + 1) | 0);
    } else {
      Atomics.add(i32, v.peerI32(p, PEER_I32.UNDERRUNS), 1);
      this.holding[p] = 1;
      if (plc.run > PLC_FADE_QUANTA) this.outage[p] = 1;
    }
  }

  /**
   * After each fill window: if the low point has stayed more than TRIM_ABOVE (at least
   * TRIM_EXCESS) quanta above the target for TRIM_SUSTAINED_WINDOWS windows, ask for a trim down to one quantum over the target
   * (the rate controller does the rest). Nothing network jitter does keeps the low point that high
   * for that long, since the low point is where the jitter has already been subtracted; what does
   * is this audio thread stalling while frames kept arriving, or the user lowering a manual depth.
   */
  private watchExcess(p: number): void {
    const target = Atomics.load(this.v.i32, this.v.peerI32(p, PEER_I32.TARGET_DEPTH));
    const excess = Math.floor(this.fillMin[p]! / QUANTUM_FRAMES) - target;
    const above = Atomics.load(this.v.i32, this.v.peerI32(p, PEER_I32.TRIM_ABOVE));
    if (excess <= TRIM_EXCESS || excess <= above || this.holding[p] !== 0 || this.outage[p] !== 0) {
      this.highWindows[p] = 0;
      return;
    }
    const n = ++this.highWindows[p]!;
    if (n === 1 || excess < this.highExcess[p]!) this.highExcess[p] = excess;
    if (n >= TRIM_SUSTAINED_WINDOWS) {
      this.skip[p] = this.highExcess[p]! - 1;
      this.highWindows[p] = 0;
    }
  }

  /**
   * Copy frame `seq` from ring slot `slot` to `dst` at `o` (interleaved samples); false when the
   * slot no longer holds it. The caller saw the slot tagged `seq`, and that tag load makes the
   * worker's sample writes visible (it stores the tag after them). The worker never writes a slot
   * the cursor has not passed, except for a resync's first frame, which lands wherever its sequence
   * falls: it re-tags every slot before writing those samples, so a tag still `seq` after the copy
   * means the copy is whole (a seqlock read; playback-threads.test.ts tore frames without it).
   */
  private copySlot(p: number, slot: number, seq: number, dst: Float32Array, o: number): boolean {
    const v = this.v;
    const src = v.samples(p, slot);
    const f32 = v.f32;
    for (let i = 0; i < QUANTUM_FRAMES * 2; i++) dst[o + i] = f32[src + i]!;
    return Atomics.load(v.i32, v.tag(p, slot)) === (seq | 0);
  }

  /**
   * Skip `skip[p]` quanta at the frame `cur` just written at `at`: if the frame that many ahead is
   * there, it replaces `cur` in the FIFO, faded in over the quantum while `cur` (the old timeline's
   * continuation) fades out, so the jump has no step. The skipped frames are marked taken (so the
   * worker does not count them late) and counted TRIMMED. Returns the (possibly new) cursor frame.
   */
  private splice(p: number, fifo: Float32Array, at: number, cur: number): number {
    const v = this.v;
    const i32 = v.i32;
    const k = this.skip[p]!;
    this.skip[p] = 0;
    const to = (cur + k) >>> 0;
    const toSlot = slotOf(to);
    if (k >= JITTER_SLOTS || Atomics.load(i32, v.tag(p, toSlot)) !== (to | 0)) return cur; // not there (yet): no trim
    const next = this.spliceFrame;
    if (!this.copySlot(p, toSlot, to, next, 0)) return cur; // a resync overwrote it: no trim
    for (let s = (cur + 1) >>> 0; s !== to; s = (s + 1) >>> 0) {
      if (Atomics.load(i32, v.tag(p, slotOf(s))) === (s | 0)) Atomics.store(i32, v.taken(p, slotOf(s)), s | 0);
    }
    const o = 2 * at;
    const xfade = this.xfade;
    for (let f = 0; f < QUANTUM_FRAMES; f++) {
      const w = xfade[f]!;
      fifo[o + 2 * f] = fifo[o + 2 * f]! * (1 - w) + next[2 * f]! * w;
      fifo[o + 2 * f + 1] = fifo[o + 2 * f + 1]! * (1 - w) + next[2 * f + 1]! * w;
    }
    Atomics.store(i32, v.taken(p, toSlot), to | 0);
    Atomics.add(i32, v.peerI32(p, PEER_I32.TRIMMED), k);
    return to;
  }

  /**
   * Adopt a resync the worker published. Seqlock on RESYNC_GEN: odd means the worker is writing the
   * fields; a changed value after reading them means they may be mixed. Either way keep the current
   * timeline for this quantum and try again at the next one (never spin on the audio thread).
   */
  private adoptResync(p: number): void {
    const v = this.v;
    const i32 = v.i32;
    const genIdx = v.peerI32(p, PEER_I32.RESYNC_GEN);
    const gen = Atomics.load(i32, genIdx);
    if (gen === this.ackGen[p] || (gen & 1) !== 0) return;
    let cursor = Atomics.load(i32, v.peerI32(p, PEER_I32.RESYNC_CURSOR)) >>> 0;
    let first = Atomics.load(i32, v.peerI32(p, PEER_I32.RESYNC_FIRST)) >>> 0;
    if (Atomics.load(i32, genIdx) !== gen) return;
    // Adopted late (e.g. while this thread was starting up) and frames have piled up beyond the
    // target: start at the target depth behind the newest frame instead, and skip the older
    // frames of this brand-new timeline, which nobody has heard yet.
    const depth = Atomics.load(i32, v.peerI32(p, PEER_I32.TARGET_DEPTH));
    const newest = Atomics.load(i32, v.peerI32(p, PEER_I32.NEWEST)) >>> 0;
    if (seqDiff(newest, cursor) > depth && seqDiff(newest, first) >= 0 && seqDiff(newest, first) < 64) {
      const start = (newest - depth) >>> 0;
      // Mark the skipped frames taken, so the worker does not count them late when their slots are reused.
      for (let s = first; seqDiff(start, s) > 0; s = (s + 1) >>> 0) {
        if (Atomics.load(i32, v.tag(p, slotOf(s))) === (s | 0)) Atomics.store(i32, v.taken(p, slotOf(s)), s | 0);
      }
      cursor = start;
      if (seqDiff(cursor, first) > 0) first = cursor;
    }
    this.cursor[p] = cursor;
    this.first[p] = first;
    this.started[p] = 1;
    this.outage[p] = 0;
    this.holding[p] = 0;
    this.ackGen[p] = gen;
    // A fresh FIFO: silent history, the read position HALF frames behind the write position
    // (the interpolation kernel's look-ahead: 0.17 ms).
    this.fifo[p]!.fill(0, 0, 2 * KEEP);
    this.wr[p] = KEEP;
    this.rd[p] = KEEP - HALF;
    this.plc[p]!.reset();
    this.fillQuanta[p] = 0;
    this.fillMin[p] = Infinity;
    this.highWindows[p] = 0;
    this.skip[p] = 0;
    this.fillCount[p] = Atomics.load(i32, v.peerI32(p, PEER_I32.FILL_COUNT));
    Atomics.store(i32, v.peerI32(p, PEER_I32.CURSOR), cursor | 0);
    Atomics.store(i32, v.peerI32(p, PEER_I32.PLAY_POS), (Math.imul(cursor, QUANTUM_FRAMES) - HALF) | 0);
    Atomics.store(i32, v.peerI32(p, PEER_I32.ACK_GEN), gen);
  }

  private finishMaster(outL: Float32Array, outR: Float32Array): void {
    const v = this.v;
    const f32 = v.f32;
    const master = f32[PLAY_F32.MASTER_GAIN]!;
    let peak = 0;
    let clipped = 0;
    const chans = outR === outL ? 1 : 2;
    for (let c = 0; c < chans; c++) {
      const out = c === 0 ? outL : outR;
      for (let f = 0; f < QUANTUM_FRAMES; f++) {
        let x = out[f]! * master;
        const a = x > 0 ? x : -x;
        if (a > peak) peak = a;
        // Full scale: the sum is left untouched below 0 dBFS and hard-clipped above it (counted,
        // shown as the clip light). No limiter: it would change the players' dynamics.
        if (x > 1) { x = 1; clipped++; } else if (x < -1) { x = -1; clipped++; }
        out[f] = x;
      }
    }
    this.masterPeak = Math.max(peak, this.masterPeak * METER_DECAY);
    f32[PLAY_F32.MASTER_PEAK] = this.masterPeak;
    if (clipped > 0) {
      this.clipped += clipped;
      Atomics.store(v.i32, PLAY_I32.CLIPPED, this.clipped);
    }
    Atomics.store(v.i32, PLAY_I32.QUANTA, ++this.quanta);
  }
}
