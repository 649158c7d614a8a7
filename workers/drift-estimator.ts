// Clock drift between one remote sender and this receiver, measured rather than inferred. At each
// packet arrival the network worker pairs the packet's sequence (the sender's audio clock: one per
// 128 frames it captured) with the playback worklet's count of rendered quanta (PLAY_I32.QUANTA:
// our output clock). The least-squares slope of quanta rendered per sequence arrived, over the last
// ~22 s, is the ratio of the two clocks. Playout-rate steering, trims and held quanta change what
// is played, not what arrives or what is rendered, so they do not bias it; arrival bursts, network
// jitter and render bursts are noise that the regression over ~8 000 points averages to a few ppm.
// A network delay that keeps growing or shrinking for tens of seconds reads as drift: nothing at
// the receiver can tell the two apart. Runs in the network worker, a few additions per packet.

import { seqDiff } from '../src/shared/seq.ts';

/** Arrivals summed per block (~1 s) and blocks kept (~22 s): sums of blocks are the sums of their union. */
const BLOCK = 375;
const BLOCKS = 22;
/** Blocks needed before an estimate is given (~5 s: tens of ppm; ±10 or better at 22 s). */
const MIN_BLOCKS = 5;
/** Largest ratio it reports (±4000 ppm: sound cards stay within ~100, timer-driven fake devices ~1000). */
const MAX_DRIFT = 0.004;

export class DriftEstimator {
  // Per block: n, Σx, Σy, Σxx, Σxy with x = sequence and y = rendered quanta, both relative to the
  // first arrival of the timeline (exact in doubles for days of audio).
  private readonly n = new Float64Array(BLOCKS);
  private readonly sx = new Float64Array(BLOCKS);
  private readonly sy = new Float64Array(BLOCKS);
  private readonly sxx = new Float64Array(BLOCKS);
  private readonly sxy = new Float64Array(BLOCKS);
  private block = 0;
  private filled = 0;
  private started = false;
  private seq0 = 0;
  private quanta0 = 0;

  /** One data packet arrived: its sequence, and the quanta our output has rendered so far. */
  add(seq: number, renderedQuanta: number): void {
    if (!this.started) {
      this.started = true;
      this.seq0 = seq;
      this.quanta0 = renderedQuanta;
    }
    const x = seqDiff(seq, this.seq0);
    const y = (renderedQuanta - this.quanta0) | 0; // the counter wraps at 2^31 (≈ 66 days)
    const b = this.block;
    if (this.n[b]! >= BLOCK) {
      // Next block: it replaces the oldest. Move the origin to this point so the sums stay small
      // (an hour of x² summed would outgrow a double's exact range).
      this.rebase(x, y);
      this.seq0 = seq;
      this.quanta0 = renderedQuanta;
      this.block = (b + 1) % BLOCKS;
      if (this.filled < BLOCKS) this.filled++;
      this.clear(this.block);
      this.addPoint(0, 0);
      return;
    }
    this.addPoint(x, y);
  }

  private addPoint(x: number, y: number): void {
    const k = this.block;
    this.n[k]! += 1;
    this.sx[k]! += x;
    this.sy[k]! += y;
    this.sxx[k]! += x * x;
    this.sxy[k]! += x * y;
  }

  /** A new timeline (resync): sequences jump, so the regression restarts. */
  reset(): void {
    this.started = false;
    this.block = 0;
    this.filled = 0;
    this.clear(0);
  }

  /** Sender clock / our clock − 1 (+ = the sender runs fast), or null before MIN_BLOCKS seconds of arrivals. */
  estimate(): number | null {
    if (this.filled < MIN_BLOCKS) return null;
    let n = 0;
    let sx = 0;
    let sy = 0;
    let sxx = 0;
    let sxy = 0;
    for (let b = 0; b < BLOCKS; b++) {
      n += this.n[b]!;
      sx += this.sx[b]!;
      sy += this.sy[b]!;
      sxx += this.sxx[b]!;
      sxy += this.sxy[b]!;
    }
    const varX = sxx - (sx * sx) / n;
    if (!(varX > 0)) return null;
    const quantaPerSeq = (sxy - (sx * sy) / n) / varX;
    if (!(quantaPerSeq > 0)) return null;
    const drift = 1 / quantaPerSeq - 1;
    return Math.max(-MAX_DRIFT, Math.min(MAX_DRIFT, drift));
  }

  /** Shift every block's sums to an origin at (dx, dy) of the current one (least-squares sums move exactly). */
  private rebase(dx: number, dy: number): void {
    for (let b = 0; b < BLOCKS; b++) {
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
