// Playback worklet: the reading side of one remote peer's de-jitter ring, the counterpart of
// workers/jitter-writer.ts. Each render quantum it adopts a resync the writer published, takes the
// cursor's frame from the ring into a small FIFO (or conceals the gap, or waits when nothing newer
// has come), plays the FIFO at the rate the network worker steers (drift compensation, click-free
// depth changes), trims a sustained excess, and publishes where playout is and each fill window's
// low point. The mixer (mixer.ts) only applies gain and sums. Real-time code: all state is
// preallocated; nothing here allocates.
// (Over 300 lines on purpose: pull, splice, resync and the excess watch are one state machine over
// the same cursor and FIFO; split apart, each would need the others' private state.)

import { JITTER_SLOTS, MAX_RATE_DEVIATION, QUANTUM_FRAMES, TRIM_EXCESS } from '../src/shared/constants.ts';
import { FILL_RING, FILL_WINDOW, HeardFlag, PEER_F32, PEER_I32, PlaybackViews, playPosition, slotOf } from '../src/shared/memory-layout.ts';
import { seqDiff } from '../src/shared/seq.ts';
import { Concealer, Fit, PLC_FADE_QUANTA, PLC_WINDOW } from './plc.ts';
import { HALF, SincTable } from './resampler.ts';

/** Per-peer playout FIFO, in frames: history for concealment and the resampler, plus what is being played. */
export const FIFO_FRAMES = 2048;
/** History kept before the read position when the FIFO is compacted. */
const KEEP = PLC_WINDOW + HALF;
/** Fill windows (43 ms each: 340 ms) the low point must stay above target + TRIM_EXCESS before a trim. */
const TRIM_SUSTAINED_WINDOWS = 8;
/**
 * Fill windows (~260 ms) a stall trim (PEER_I32.TRIM_NOW) stays asked for: the peer's audio that
 * waited through the stall can still be arriving when the first window closes (a loaded run
 * trimmed 8 of a 10-quantum stall there, and the rate drained the other 2.5 over 1.5 s while the
 * one-way delay fell with it), so what the first trim left is taken as it shows, up to the stall's quanta.
 */
export const TRIM_NOW_WINDOWS = 6;
/**
 * Fill windows remembered for a stall trim's floor: when the request comes (net follows our output's
 * step ~0.15-0.2 s after the stall, 3-5 windows), the older half of the last 8 (~0.2-0.35 s back)
 * is from before the stall, and their median low point is the level the stall interrupted.
 */
export const FLOOR_WINDOWS = 8;
/**
 * Quanta under the target below which the level a stall interrupted is not kept by the stall
 * trim: the trim leaves at least target − this. The rate steers the level to the target and holds
 * it within about a quantum (a level that sat just under it is kept, so the delay is where it was:
 * the leader-mode strikes). Lower is a deficit the rate, at most 0.5 %, was still refilling (a
 * sender whose capture lost time, a dry spell): keeping it made the trim a ratchet on a machine
 * that stalls every second or so. Each stall's net gain (our output lost more than the sender's
 * capture) was cut back to the low level, each net loss stayed, and the level fell for good: a
 * CI run of truth.spec.ts's 1000 ppm test (7.4 % host steal) held 1-5 quanta at target 8 for its
 * last 15 s, the rate pinned at 0.995, with 87 trims (under the target only a stall's) and 79
 * underruns in 30 s.
 */
export const STALL_TRIM_DEFICIT = 1;
/**
 * Frames beyond the target a resync may find queued when this thread adopts it and still start at
 * its cursor: two of the rig's device periods (8 quanta each), which arrive at once. More is a
 * backlog this thread's late start let pile up (see adoptResync).
 */
export const PILED_BEYOND = 16;
/** Per-quantum slew of the applied rate toward the controller's (time constant ≈ 32 quanta = 85 ms). */
const RATE_SLEW = 1 / 32;
/** When the controller wants 1 and the slewed rate is this close (10 ppm, 0.02 cent), it is 1. */
const SETTLE_BELOW = 1e-5;
/**
 * At rate 1 after steering, the read position still sits between two frames, so every sample is
 * interpolated. It lands on the next whole frame by playing a quarter of the way there each
 * quantum (at most 0.2 % fast, 3 cents, for a few ms), and is snapped once this close: a jump of a
 * millionth of a frame (−98 dB at 10 kHz). From then on playout is the sender's samples verbatim.
 */
const LAND_QUANTA = 4;
const SNAP_FRAMES = 1e-6;

/** What all peers share on the audio thread: tables, scratch, and this quantum's concealment budget. */
export class PlayoutShared {
  readonly sinc = new SincTable();
  /** Fade-in weights of a splice (raised cosine over one quantum). */
  readonly xfade = new Float32Array(QUANTUM_FRAMES);
  /** The frame a splice fades in, copied out of its slot first (see copySlot). */
  readonly spliceFrame = new Float32Array(QUANTUM_FRAMES * 2);
  /** Concealment fits left in this render quantum (the mixer sets them each quantum). */
  fullFitsLeft = 0;
  lightFitsLeft = 0;

  constructor() {
    for (let f = 0; f < QUANTUM_FRAMES; f++) this.xfade[f] = 0.5 - 0.5 * Math.cos((Math.PI * (f + 0.5)) / QUANTUM_FRAMES);
  }
}

export class PeerPlayout {
  /** Next sequence to take, and the first of the current timeline. */
  private cursor = 0;
  private first = 0;
  private ackGen: number;
  private started = false;
  /** After a gap longer than the concealment fade: wait (silent) until the target depth is buffered again. */
  private outage = false;
  /** The previous pull was an underrun (the cursor waited). */
  private holding = false;
  /** Read position in the FIFO (fractional frames) and write position (frames). */
  private rd = 0;
  private wr = 0;
  private rate = 1;
  /** Lowest fill of the current window (frames), quanta rendered in it, windows published. */
  private fillMin = Infinity;
  private fillQuanta = 0;
  private fillCount = 0;
  /** Consecutive fill windows whose low point was more than TRIM_EXCESS over the target, and the smallest excess (quanta) among them. */
  private highWindows = 0;
  private highExcess = 0;
  /** Quanta to skip at the next frame taken (0: none); the skip is spliced in with a crossfade. */
  private skip = 0;
  /** Quanta of a stall trim still allowed, and the fill windows left to take them (TRIM_NOW_WINDOWS). */
  private trimBudget = 0;
  private trimWindows = 0;
  /**
   * The last FLOOR_WINDOWS windows' low points (frames; a ring by fillCount), and the level a stall
   * trim goes back to, taken from them at the request (frames of low point; -1: none known).
   */
  private readonly lows = new Float64Array(FLOOR_WINDOWS);
  private readonly lowsSorted = new Float64Array(FLOOR_WINDOWS / 2);
  private trimKeep = -1;
  private readonly plc = new Concealer();
  /** What happened to this peer's audio in the last render (HeardFlag bits), for a take's sidecar. */
  flags = 0;
  /** This render adopted a resync while the stream was playing: the audio jumped (a take flags it trimmed). */
  private jumped = false;

  constructor(
    private readonly v: PlaybackViews,
    /** This peer's slot in the playback memory. */
    readonly p: number,
    /** Its FIFO: FIFO_FRAMES interleaved stereo frames. */
    private readonly fifo: Float32Array,
    private readonly shared: PlayoutShared,
  ) {
    this.ackGen = Atomics.load(v.i32, v.peerI32(p, PEER_I32.RESYNC_GEN));
  }

  /** The slot is CLOSING: forget the stream (the mixer then frees the slot). */
  close(): void {
    this.started = false;
    this.ackGen = Atomics.load(this.v.i32, this.v.peerI32(this.p, PEER_I32.RESYNC_GEN));
    this.rate = 1;
  }

  /**
   * One render quantum of this peer, before gain, into `l` and `r` (QUANTUM_FRAMES each); false
   * when it has no stream yet (nothing written).
   */
  render(l: Float64Array, r: Float64Array): boolean {
    const v = this.v;
    const i32 = v.i32;
    const p = this.p;
    this.adoptResync();
    if (!this.started) return false;
    this.flags = this.jumped ? HeardFlag.TRIMMED : 0;
    this.jumped = false;

    // Rate steering: slew toward the controller's rate, clamped (a bad value cannot run away).
    let target = v.f32[v.peerF32(p, PEER_F32.RATE)]!;
    if (!(target >= 1 - MAX_RATE_DEVIATION)) target = 1 - MAX_RATE_DEVIATION;
    else if (target > 1 + MAX_RATE_DEVIATION) target = 1 + MAX_RATE_DEVIATION;
    let rate = this.rate;
    rate += (target - rate) * RATE_SLEW;
    if (Math.abs(rate - 1) < SETTLE_BELOW && target === 1) rate = 1; // settle exactly
    this.rate = rate;
    let rd = this.rd;
    if (rate === 1) {
      // Land the read position on a whole frame: bit-exact playout again.
      const whole = Math.floor(rd);
      const frac = rd - whole;
      if (frac < SNAP_FRAMES) rd = whole;
      else if (1 - frac < SNAP_FRAMES) rd = whole + 1;
      else rate = 1 + (1 - frac) / (QUANTUM_FRAMES * LAND_QUANTA);
    }
    // Any rate but 1, or a read position between frames: what plays is interpolated, not as sent.
    if (rate !== 1 || rd !== Math.floor(rd)) this.flags |= HeardFlag.RESAMPLED;

    // Take frames from the ring until the kernel has what the last output frame needs.
    const fifo = this.fifo;
    while (Math.floor(rd + (QUANTUM_FRAMES - 1) * rate) + HALF >= this.wr) this.pull();

    const sinc = this.shared.sinc;
    for (let f = 0; f < QUANTUM_FRAMES; f++) {
      const x = rd + f * rate;
      l[f] = sinc.interpolate(fifo, x, 0);
      r[f] = sinc.interpolate(fifo, x, 1);
    }
    rd += QUANTUM_FRAMES * rate;
    // Compact: keep KEEP frames of history before the read position.
    if (this.wr + 3 * QUANTUM_FRAMES > FIFO_FRAMES) {
      const shift = Math.floor(rd) - KEEP;
      fifo.copyWithin(0, 2 * shift, 2 * this.wr);
      rd -= shift;
      this.wr -= shift;
    }
    this.rd = rd;
    // Publish where playout is, in frames of the sender's stream (see PEER_I32.PLAY_POS).
    const pending = Math.round(this.wr - rd);
    Atomics.store(i32, v.peerI32(p, PEER_I32.PLAY_POS), playPosition(this.cursor, pending));
    // Fill right after consuming is the low point of the cycle; publish each window's minimum.
    const newest = Atomics.load(i32, v.peerI32(p, PEER_I32.NEWEST)) >>> 0;
    const fill = (seqDiff(newest, this.cursor) + 1) * QUANTUM_FRAMES + pending;
    if (fill < this.fillMin) this.fillMin = fill;
    if (++this.fillQuanta >= FILL_WINDOW) {
      const n = this.fillCount;
      Atomics.store(i32, v.peerI32(p, PEER_I32.FILL_MIN + (n % FILL_RING)), Math.round(this.fillMin));
      Atomics.store(i32, v.peerI32(p, PEER_I32.FILL_TRIMMED + (n % FILL_RING)), Atomics.load(i32, v.peerI32(p, PEER_I32.TRIMMED)));
      this.watchExcess();
      this.fillCount = n + 1;
      Atomics.store(i32, v.peerI32(p, PEER_I32.FILL_COUNT), n + 1);
      this.fillQuanta = 0;
      this.fillMin = Infinity;
    }
    return true;
  }

  /**
   * Append one quantum at the FIFO's write position: the frame for the cursor if it is there;
   * otherwise concealment, and the cursor moves on only if something newer has arrived (the frame
   * is lost or late). If nothing newer has, the buffer ran dry: conceal and wait (an underrun, which
   * adds one quantum of delay instead of making the next frames late).
   */
  private pull(): void {
    const v = this.v;
    const i32 = v.i32;
    const p = this.p;
    const fifo = this.fifo;
    let cur = this.cursor;
    const at = this.wr;
    const plc = this.plc;
    this.wr = at + QUANTUM_FRAMES;
    if (seqDiff(cur, this.first) < 0) {
      // Before the stream's first frame (the initial depth): silence, nothing is missing.
      fifo.fill(0, 2 * at, 2 * (at + QUANTUM_FRAMES));
      this.cursor = (cur + 1) >>> 0;
      Atomics.store(i32, v.peerI32(p, PEER_I32.CURSOR), (cur + 1) | 0);
      return;
    }
    if (this.outage) {
      // Rebuffer after an outage: stay silent until the target depth has arrived again.
      const queued = seqDiff(Atomics.load(i32, v.peerI32(p, PEER_I32.NEWEST)) >>> 0, cur) + 1;
      if (queued < Atomics.load(i32, v.peerI32(p, PEER_I32.TARGET_DEPTH))) {
        fifo.fill(0, 2 * at, 2 * (at + QUANTUM_FRAMES));
        Atomics.add(i32, v.peerI32(p, PEER_I32.UNDERRUNS), 1);
        this.flags |= HeardFlag.UNDERRUN;
        return;
      }
      this.outage = false;
    }
    const slot = slotOf(cur);
    if (Atomics.load(i32, v.tag(p, slot)) === (cur | 0) && this.copySlot(slot, cur, fifo, 2 * at)) {
      // (Resuming after an underrun takes no trim here: what is queued right after a burst arrives
      // is the top of the arrival sawtooth, while the target is a low point. A stall's backlog is
      // trimmed by watchExcess once the low point shows it.)
      this.holding = false;
      Atomics.store(i32, v.taken(p, slot), cur | 0);
      if (this.skip > 0) cur = this.splice(at, cur);
      Atomics.add(i32, v.peerI32(p, PEER_I32.PLAYED), 1);
      plc.recover(fifo, at);
      this.outage = false;
      this.cursor = (cur + 1) >>> 0;
      Atomics.store(i32, v.peerI32(p, PEER_I32.CURSOR), (cur + 1) | 0);
      return;
    }
    const ahead = seqDiff(Atomics.load(i32, v.peerI32(p, PEER_I32.NEWEST)) >>> 0, cur);
    let fit: Fit = Fit.CONTINUE;
    const shared = this.shared;
    if (plc.run === 0) fit = shared.fullFitsLeft-- > 0 ? Fit.FULL : shared.lightFitsLeft-- > 0 ? Fit.LIGHT : Fit.NONE;
    plc.conceal(fifo, at, QUANTUM_FRAMES, at, fit);
    if (plc.run <= PLC_FADE_QUANTA) Atomics.add(i32, v.peerI32(p, PEER_I32.CONCEALED), 1);
    if (ahead > 0) {
      this.flags |= HeardFlag.CONCEALED;
      Atomics.add(i32, v.peerI32(p, PEER_I32.MISSED), 1);
      this.cursor = (cur + 1) >>> 0;
      Atomics.store(i32, v.peerI32(p, PEER_I32.CURSOR), (cur + 1) | 0);
    } else {
      Atomics.add(i32, v.peerI32(p, PEER_I32.UNDERRUNS), 1);
      this.flags |= HeardFlag.UNDERRUN;
      this.holding = true;
      if (plc.run > PLC_FADE_QUANTA) this.outage = true;
    }
  }

  /**
   * After each fill window: if net asked (PEER_I32.TRIM_NOW, a stall of this machine), trim the
   * excess at once, and what more of it shows over the next TRIM_NOW_WINDOWS windows, up to the
   * quanta asked. Else if the low point has stayed more than SUSTAINED_ABOVE (at least TRIM_ABOVE, at least
   * TRIM_EXCESS) quanta above the target for TRIM_SUSTAINED_WINDOWS windows, ask for a trim down to
   * one quantum over the target (the rate controller does the rest). Nothing network jitter does
   * keeps the low point that high for that long, since the low point is where the jitter has
   * already been subtracted; what does is this audio thread stalling while frames kept arriving, or
   * the user lowering a manual depth.
   */
  private watchExcess(): void {
    const v = this.v;
    const target = Atomics.load(v.i32, v.peerI32(this.p, PEER_I32.TARGET_DEPTH));
    const excess = Math.floor(this.fillMin / QUANTUM_FRAMES) - target;
    const above = Atomics.load(v.i32, v.peerI32(this.p, PEER_I32.TRIM_ABOVE));
    // This machine stalled (net saw our output step later): its backlog goes now, back to the
    // level the stall interrupted, so the delay is where it was within a window or two of net's
    // request. That level is the low point before the stall, in frames and whether over the target
    // or under it (the rate steers the level to the target; the trim only undoes the stall). Not
    // kept above it for a recurring step's excess (TRIM_ABOVE): where the rhythm held the level
    // up, the level before holds it too, and a floor of target + TRIM_ABOVE kept the whole backlog
    // of most stalls on the bench rig (TRIM_ABOVE 9-10 there): a 55 ms stop of its sound server
    // left the level ~13 quanta over where the controller held it, drained at +0.5 % for ~7 s
    // (bench/m2e/segments/main.ts trace with TRACE_STALL, 2026-12-07). Not below
    // it: the request's quanta are the output's step, which can be more than the backlog that
    // arrived, and a level that sat over the target was cut under it (a leader-mode run: the
    // one-way delay 74.5 ms before a stall, 66.2 after, a strike 7.9 ms early). Not above it
    // either: the skip is rounded to the nearest quantum, where flooring the excess over the
    // target left a level that sat under the target by a fraction a quantum higher after every
    // stall (lows 11.7 at target 12, 23.7 after, 11 trimmed: 12.7, the one-way delay 70.7 → 73.4 ms).
    const now = Atomics.exchange(v.i32, v.peerI32(this.p, PEER_I32.TRIM_NOW), 0);
    if (now > 0) {
      this.trimBudget = now;
      this.trimWindows = TRIM_NOW_WINDOWS;
      this.trimKeep = this.levelBefore();
    }
    this.lows[this.fillCount % FLOOR_WINDOWS] = this.fillMin;
    if (this.trimWindows > 0) {
      this.trimWindows--;
      // No level known (a stream younger than FLOOR_WINDOWS): the target, the excess floored. A
      // level more than STALL_TRIM_DEFICIT under the target was a deficit, not where the rate held
      // it: the backlog refills it that far (see STALL_TRIM_DEFICIT).
      let keep = this.trimKeep < 0 ? (target + 0.5) * QUANTUM_FRAMES : Math.max(this.trimKeep, (target - STALL_TRIM_DEFICIT) * QUANTUM_FRAMES);
      const skip = Math.min(Math.round((this.fillMin - keep) / QUANTUM_FRAMES), this.trimBudget);
      if (skip > 0 && !this.holding && !this.outage) {
        this.skip = skip;
        this.trimBudget -= skip;
        if (this.trimBudget === 0) this.trimWindows = 0;
        this.highWindows = 0;
        return;
      }
    }
    const sustainedAbove = Math.max(above, Atomics.load(v.i32, v.peerI32(this.p, PEER_I32.SUSTAINED_ABOVE)));
    if (excess <= TRIM_EXCESS || excess <= sustainedAbove || this.holding || this.outage) {
      this.highWindows = 0;
      return;
    }
    const n = ++this.highWindows;
    if (n === 1 || excess < this.highExcess) this.highExcess = excess;
    if (n >= TRIM_SUSTAINED_WINDOWS) {
      this.skip = this.highExcess - 1;
      this.highWindows = 0;
    }
  }

  /**
   * The level a stall interrupted (frames of low point): the median low point of the older half of
   * the last FLOOR_WINDOWS windows before this one (FLOOR_WINDOWS). -1 while the stream has not had
   * that many (the trim then goes down to the target).
   */
  private levelBefore(): number {
    const n = FLOOR_WINDOWS / 2;
    if (this.fillCount < FLOOR_WINDOWS) return -1;
    const sorted = this.lowsSorted;
    for (let k = 0; k < n; k++) {
      // fillCount − FLOOR_WINDOWS … fillCount − n − 1: the oldest windows in the ring.
      const x = this.lows[(this.fillCount - FLOOR_WINDOWS + k) % FLOOR_WINDOWS]!;
      let i = k;
      while (i > 0 && sorted[i - 1]! > x) {
        sorted[i] = sorted[i - 1]!;
        i--;
      }
      sorted[i] = x;
    }
    return (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
  }

  /**
   * Copy frame `seq` from ring slot `slot` to `dst` at `o` (interleaved samples); false when the
   * slot no longer holds it. The caller saw the slot tagged `seq`, and that tag load makes the
   * worker's sample writes visible (it stores the tag after them). The worker never writes a slot
   * the cursor has not passed, except for a resync's first frame, which lands wherever its sequence
   * falls: it re-tags every slot before writing those samples, so a tag still `seq` after the copy
   * means the copy is whole (a seqlock read; playback-threads.test.ts tore frames without it).
   */
  private copySlot(slot: number, seq: number, dst: Float32Array, o: number): boolean {
    const v = this.v;
    const src = v.samples(this.p, slot);
    const f32 = v.f32;
    for (let i = 0; i < QUANTUM_FRAMES * 2; i++) dst[o + i] = f32[src + i]!;
    return Atomics.load(v.i32, v.tag(this.p, slot)) === (seq | 0);
  }

  /**
   * Skip `skip` quanta at the frame `cur` just written at `at`: if the frame that many ahead is
   * there, it replaces `cur` in the FIFO, faded in over the quantum while `cur` (the old timeline's
   * continuation) fades out, so the jump has no step. The skipped frames are marked taken (so the
   * worker does not count them late) and counted TRIMMED. Returns the (possibly new) cursor frame.
   */
  private splice(at: number, cur: number): number {
    const v = this.v;
    const i32 = v.i32;
    const p = this.p;
    const fifo = this.fifo;
    const k = this.skip;
    this.skip = 0;
    const to = (cur + k) >>> 0;
    const toSlot = slotOf(to);
    if (k >= JITTER_SLOTS || Atomics.load(i32, v.tag(p, toSlot)) !== (to | 0)) return cur; // not there (yet): no trim
    const next = this.shared.spliceFrame;
    if (!this.copySlot(toSlot, to, next, 0)) return cur; // a resync overwrote it: no trim
    for (let s = (cur + 1) >>> 0; s !== to; s = (s + 1) >>> 0) {
      if (Atomics.load(i32, v.tag(p, slotOf(s))) === (s | 0)) Atomics.store(i32, v.taken(p, slotOf(s)), s | 0);
    }
    const o = 2 * at;
    const xfade = this.shared.xfade;
    for (let f = 0; f < QUANTUM_FRAMES; f++) {
      const w = xfade[f]!;
      fifo[o + 2 * f] = fifo[o + 2 * f]! * (1 - w) + next[2 * f]! * w;
      fifo[o + 2 * f + 1] = fifo[o + 2 * f + 1]! * (1 - w) + next[2 * f + 1]! * w;
    }
    Atomics.store(i32, v.taken(p, toSlot), to | 0);
    Atomics.add(i32, v.peerI32(p, PEER_I32.TRIMMED), k);
    this.flags |= HeardFlag.TRIMMED;
    return to;
  }

  /**
   * Adopt a resync the worker published. Seqlock on RESYNC_GEN: odd means the worker is writing the
   * fields; a changed value after reading them means they may be mixed. Either way keep the current
   * timeline for this quantum and try again at the next one (never spin on the audio thread).
   */
  private adoptResync(): void {
    const v = this.v;
    const i32 = v.i32;
    const p = this.p;
    const genIdx = v.peerI32(p, PEER_I32.RESYNC_GEN);
    const gen = Atomics.load(i32, genIdx);
    if (gen === this.ackGen || (gen & 1) !== 0) return;
    let cursor = Atomics.load(i32, v.peerI32(p, PEER_I32.RESYNC_CURSOR)) >>> 0;
    let first = Atomics.load(i32, v.peerI32(p, PEER_I32.RESYNC_FIRST)) >>> 0;
    if (Atomics.load(i32, genIdx) !== gen) return;
    // Adopted late (e.g. while this thread was starting up) and frames have piled up beyond the
    // target by more than a sender's device periods arriving at once explain (PILED_BEYOND): start
    // at the target depth behind the newest frame instead. A burst is not time: the first frame
    // of a burst publishes the resync, the rest of it lands before this thread's next render, and
    // taking it for a late start left every join a burst short of its depth (the rig's 8-quantum
    // periods: a low point of ~1 where the target was 8, and an underrun in its first second).
    // The older frames of this brand-new timeline are skipped (nobody has heard them) and marked
    // taken, so the worker does not count them late when their slots are reused.
    const depth = Atomics.load(i32, v.peerI32(p, PEER_I32.TARGET_DEPTH));
    const newest = Atomics.load(i32, v.peerI32(p, PEER_I32.NEWEST)) >>> 0;
    if (seqDiff(newest, cursor) > depth + PILED_BEYOND && seqDiff(newest, first) >= 0 && seqDiff(newest, first) < JITTER_SLOTS) {
      const start = (newest - depth) >>> 0;
      for (let s = first; seqDiff(start, s) > 0; s = (s + 1) >>> 0) {
        if (Atomics.load(i32, v.tag(p, slotOf(s))) === (s | 0)) Atomics.store(i32, v.taken(p, slotOf(s)), s | 0);
      }
      cursor = start;
      if (seqDiff(cursor, first) > 0) first = cursor;
    }
    // A resync of a stream already playing passes over what it did not play (the worker counts
    // those frames missed or discarded): a jump the listener hears, flagged in a take as a trim.
    this.jumped = this.started;
    this.cursor = cursor;
    this.first = first;
    this.started = true;
    this.outage = false;
    this.holding = false;
    this.ackGen = gen;
    // A fresh FIFO: silent history, the read position HALF frames behind the write position
    // (the interpolation kernel's look-ahead: 0.17 ms).
    this.fifo.fill(0, 0, 2 * KEEP);
    this.wr = KEEP;
    this.rd = KEEP - HALF;
    this.plc.reset();
    this.fillQuanta = 0;
    this.fillMin = Infinity;
    this.highWindows = 0;
    this.skip = 0;
    this.trimBudget = this.trimWindows = 0;
    this.fillCount = Atomics.load(i32, v.peerI32(p, PEER_I32.FILL_COUNT));
    Atomics.store(i32, v.peerI32(p, PEER_I32.CURSOR), cursor | 0);
    Atomics.store(i32, v.peerI32(p, PEER_I32.PLAY_POS), playPosition(cursor, HALF));
    Atomics.store(i32, v.peerI32(p, PEER_I32.ACK_GEN), gen);
  }
}
