// Clock drift between one remote sender and this receiver, measured rather than inferred. At each
// packet arrival the network worker pairs the packet's sequence (the sender's audio clock: one per
// 128 frames it captured) with the playback worklet's count of rendered quanta (PLAY_I32.QUANTA:
// our output clock). The least-squares slope of quanta rendered per sequence arrived, over a
// window of the last seconds (a quick window, and a longer one the playout rate switches to),
// is the ratio of the two clocks. Playout-rate steering, trims and held quanta change what is
// played, not what arrives or what is rendered, so they do not bias it. Arrival bursts, network
// jitter and render bursts are noise: white noise averages out within seconds, but the slow wander
// of a real device's buffers does not (see the windows below).
// A network delay that keeps growing or shrinking for tens of seconds reads as drift: nothing at
// the receiver can tell the two apart. Runs in the network worker, a few additions per packet.
// A step is not drift: when a busy machine's device loses time (the sender's capture skips 3 to
// 66 ms; our output stalls), the line jumps, and one slope through the jump tilts by the jump over
// the window (a 20 ms step mid-window: ~1400 ppm for 22 s). The playout rate then holds the level
// off the target until the step leaves the window (a CI run sat 1.3 to 2.5 quanta above a manual
// depth of 8 for 15 s, with 13 underruns in 30 s). The receiver sees such a step as a glitch (an
// underrun, late frames or a trim), so the controller marks one with breakTimeline(): the last
// 133-200 ms, which hold it, are dropped, and what lies on either side is fitted as separate segments
// with one common slope (pooled within-segment least squares), which a jump between them cannot tilt.

import { seqDiff } from '../src/shared/seq.ts';

/**
 * Arrivals summed per slot (~67 ms; sums of slots are the sums of their union), and slots per
 * block of the windows below (375 arrivals, ~1 s). Slots this short let a timeline break drop only
 * what arrived between the jump and the glitch that shows it (BREAK_SLOTS).
 */
const SLOT = 25;
const SLOTS_PER_BLOCK = 15;
/**
 * Slots a break drops, the one being filled included (133-200 ms). A sender that loses time pauses
 * its arrivals; the receiver underruns when its buffer runs dry, during the pause if it is longer
 * than the buffer, and the controller reads that within 100 ms: any arrival after the jump that
 * precedes the break is in these.
 */
const BREAK_SLOTS = 3;
/**
 * The playout rate's estimate: ~22 s kept, given from ~5 s on. Quick to follow, but on a real
 * device it wanders: arrivals and rendered quanta both come in bursts whose timing drifts by ±10 ms
 * over seconds (the sound server resizes the browser's buffers), which a 22 s slope reads as a few
 * hundred ppm (measured ±700 between two processes on one machine, whose true drift is 0). The
 * rate's proportional term absorbs that, at an offset of 0.1 quantum per 100 ppm, so the rate
 * switches to the long window below once that has its 60 s.
 */
export const CONTROL_WINDOW = { blocks: 22, minBlocks: 5 } as const;
/**
 * The rate's estimate from 60 s on: ~4 min kept. The same wander over a window ten times longer
 * reads ten times smaller and more. (The figure people see is measured differently, by
 * shown-drift.ts: this slope also carries one-off steps of the render position, which the rate
 * must follow but which are not drift.)
 */
export const LONG_WINDOW = { blocks: 240, minBlocks: 60 } as const;
/** Largest ratio it reports (±4000 ppm: sound cards stay within ~100, timer-driven fake devices ~1000). */
const MAX_DRIFT = 0.004;

export class DriftEstimator {
  /** Ring of slots. */
  private readonly slots: number;
  private readonly minSlots: number;
  // Per block: n, Σx, Σy, Σxx, Σxy with x = sequence and y = rendered quanta, both relative to the
  // first arrival of the timeline (exact in doubles for days of audio).
  private readonly n: Float64Array;
  private readonly sx: Float64Array;
  private readonly sy: Float64Array;
  private readonly sxx: Float64Array;
  private readonly sxy: Float64Array;
  /** Per block: the timeline segment it belongs to (breakTimeline() starts a new one). */
  private readonly segment: Int32Array;
  private currentSegment = 0;
  private block = 0;
  private filled = 0;
  private started = false;
  private seq0 = 0;
  private quanta0 = 0;
  private less0 = 0;

  constructor(window: { blocks: number; minBlocks: number } = CONTROL_WINDOW) {
    this.slots = window.blocks * SLOTS_PER_BLOCK;
    this.minSlots = window.minBlocks * SLOTS_PER_BLOCK;
    this.n = new Float64Array(this.slots);
    this.sx = new Float64Array(this.slots);
    this.sy = new Float64Array(this.slots);
    this.sxx = new Float64Array(this.slots);
    this.sxy = new Float64Array(this.slots);
    this.segment = new Int32Array(this.slots);
  }

  /** Whole blocks (≈ seconds of arrivals) behind the estimate. */
  seconds(): number {
    return Math.floor(this.filled / SLOTS_PER_BLOCK);
  }

  /**
   * One data packet arrived: its sequence, and the quanta our output has rendered so far, less
   * `lessQuanta` if given (the depth controller's stamped estimate passes the packet's lag, which
   * dates the reading back to the packet's capture: see DepthController.update).
   */
  add(seq: number, renderedQuanta: number, lessQuanta = 0): void {
    if (!this.started) {
      this.started = true;
      this.seq0 = seq;
      this.quanta0 = renderedQuanta;
      this.less0 = lessQuanta;
    }
    const x = seqDiff(seq, this.seq0);
    // The counter wraps at 2^31 (≈ 66 days); the correction is continuous and small.
    const y = ((renderedQuanta - this.quanta0) | 0) - (lessQuanta - this.less0);
    const b = this.block;
    if (this.n[b]! >= SLOT) {
      // Next slot: it replaces the oldest. Move the origin to this point so the sums stay small
      // (an hour of x² summed would outgrow a double's exact range).
      this.rebase(x, y);
      this.seq0 = seq;
      this.quanta0 = renderedQuanta;
      this.less0 = lessQuanta;
      this.block = (b + 1) % this.slots;
      if (this.filled < this.slots) this.filled++;
      this.clear(this.block);
      this.addPoint(0, 0);
      return;
    }
    this.addPoint(x, y);
  }

  private addPoint(x: number, y: number): void {
    const k = this.block;
    this.segment[k] = this.currentSegment;
    this.n[k]! += 1;
    this.sx[k]! += x;
    this.sy[k]! += y;
    this.sxx[k]! += x * x;
    this.sxy[k]! += x * y;
  }

  /**
   * The line jumped somewhere around now (the receiver glitched): drop the last BREAK_SLOTS, and
   * fit what follows as a new segment with the same slope.
   */
  breakTimeline(): void {
    if (!this.started) return;
    for (let i = 0; i < BREAK_SLOTS; i++) this.clear((this.block + this.slots - i) % this.slots);
    this.currentSegment = (this.currentSegment + 1) | 0;
  }

  /** A new timeline (resync): sequences jump, so the regression restarts. */
  reset(): void {
    this.started = false;
    this.block = 0;
    this.filled = 0;
    for (let b = 0; b < this.slots; b++) this.clear(b); // the old timeline's slots too: its sequences are another line
  }

  /** Sender clock / our clock − 1 (+ = the sender runs fast), or null before `minBlocks` seconds of arrivals. */
  estimate(): number | null {
    if (this.filled < this.minSlots) return null;
    // Pooled within-segment least squares: each segment's sums centred on its own means, summed.
    // Slots of one segment are contiguous in ring order, oldest first from the next one.
    let varX = 0;
    let covXY = 0;
    let n = 0;
    let sx = 0;
    let sy = 0;
    let sxx = 0;
    let sxy = 0;
    let seg = 0;
    for (let i = 1; i <= this.slots; i++) {
      const b = (this.block + i) % this.slots;
      if (this.n[b]! === 0) continue;
      if (n > 0 && this.segment[b] !== seg) {
        varX += sxx - (sx * sx) / n;
        covXY += sxy - (sx * sy) / n;
        n = sx = sy = sxx = sxy = 0;
      }
      seg = this.segment[b]!;
      n += this.n[b]!;
      sx += this.sx[b]!;
      sy += this.sy[b]!;
      sxx += this.sxx[b]!;
      sxy += this.sxy[b]!;
    }
    if (n > 0) {
      varX += sxx - (sx * sx) / n;
      covXY += sxy - (sx * sy) / n;
    }
    if (!(varX > 0)) return null;
    const quantaPerSeq = covXY / varX;
    if (!(quantaPerSeq > 0)) return null;
    const drift = 1 / quantaPerSeq - 1;
    return Math.max(-MAX_DRIFT, Math.min(MAX_DRIFT, drift));
  }

  /** Shift every block's sums to an origin at (dx, dy) of the current one (least-squares sums move exactly). */
  private rebase(dx: number, dy: number): void {
    for (let b = 0; b < this.slots; b++) {
      const n = this.n[b]!;
      const sx = this.sx[b]!;
      const sy = this.sy[b]!;
      this.sxx[b] = this.sxx[b]! - 2 * dx * sx + n * dx * dx;
      this.sxy[b] = this.sxy[b]! - dx * sy - dy * sx + n * dx * dy;
      this.sx[b] = sx - n * dx;
      this.sy[b] = sy - n * dy;
    }
  }

  private clear(b: number): void {
    this.n[b] = 0;
    this.sx[b] = 0;
    this.sy[b] = 0;
    this.sxx[b] = 0;
    this.sxy[b] = 0;
  }
}
