// Network worker: when a context frame of our playback reaches the speaker, on the wall clock. Fed
// by the page's readings of `AudioContext.getOutputTimestamp()` (four a second: the context time
// being played at the device and the performance time it is played at, posted as 'output-clock'),
// read at each packet arrival to date that packet's playout at the speaker (the one-way delay,
// PeerStats.oneWayMs).
//
// Why not `outputLatency + baseLatency`? On the bench rig (PulseAudio) the time from a render to
// the speaker is not one figure per join: the output gains 10–15 ms on the wall clock in the first
// ~40 s of a join and sometimes loses a step later (workers/shown-drift.ts), and the render runs in
// bursts of several quanta ahead of the device. The output timestamp follows all of it; the two
// attributes are a fixed guess. docs/MEASUREMENT.md §3, checked by `npm run bench -- --m2e`.
//
// Each reading gives an offset, wall ms − context ms, of the device's clock. Single readings
// scatter by up to a device callback (the browser extrapolates between callbacks), so the offset
// used is the median of the last READINGS, about two seconds: it moves with the device, not with
// one reading.

import { SAMPLE_RATE } from '../src/shared/constants.ts';
import { medianInPlace } from '../src/shared/median.ts';

/** Readings whose median is used (2.25 s at four a second). */
export const READINGS = 9;
/** A reading older than this (ms of wall clock) is not trusted: the page stopped reading (hidden tab, stopped context). */
export const STALE_MS = 5000;

export class SpeakerTime {
  private readonly offsets = new Float64Array(READINGS);
  private readonly sorted = new Float64Array(READINGS);
  private count = 0;
  /** The median offset of the readings kept, ms (wall − context). */
  private offset = 0;
  /** The newest reading: its context time (s) and its wall time (ms). */
  private lastContext = 0;
  private lastWall = 0;

  /** One reading: context time `contextTime` (s) is being played at wall time `wallMs` (performance.timeOrigin + performanceTime). */
  add(contextTime: number, wallMs: number): void {
    if (!(contextTime > 0) || !Number.isFinite(contextTime) || !Number.isFinite(wallMs)) return; // not playing yet
    if (this.count > 0 && contextTime < this.lastContext) this.count = 0; // a new AudioContext: its time starts again
    this.offsets[this.count % READINGS] = wallMs - contextTime * 1000;
    this.count++;
    this.lastContext = contextTime;
    this.lastWall = wallMs;
    const n = Math.min(this.count, READINGS);
    const s = this.sorted;
    for (let i = 0; i < n; i++) s[i] = this.offsets[i]!;
    this.offset = medianInPlace(s, n);
  }

  /**
   * Wall time (ms) at which context frame `frame` (modulo 2^32, as the playback block stores it)
   * reaches the speaker, or null without a recent reading. `nowMs` is the wall clock now. The
   * frame is placed within ±2^31 frames (12 h) of the newest reading.
   */
  wallOf(frame: number, nowMs: number): number | null {
    if (this.count === 0 || nowMs - this.lastWall > STALE_MS) return null;
    const lastFrame = Math.round(this.lastContext * SAMPLE_RATE);
    const ahead = (frame - lastFrame) | 0; // signed frames from the newest reading, across the 2^32 wrap
    return (lastFrame + ahead) * (1000 / SAMPLE_RATE) + this.offset;
  }

  /**
   * The context frame (not wrapped; fractional) that reaches the speaker at wall time `wallMs`, or
   * null without a recent reading (`nowMs`: the wall clock now). The inverse of wallOf.
   */
  frameOf(wallMs: number, nowMs: number): number | null {
    if (this.count === 0 || nowMs - this.lastWall > STALE_MS) return null;
    return (wallMs - this.offset) * (SAMPLE_RATE / 1000);
  }
}
