// Network worker: schedules the room's metronome at our speaker. The page gives the state from the
// room document and our advance (leader mode); twenty times a second this turns the beat times on
// the shared clock (src/shared/metronome.ts) into context frames of our output, through our clock's
// offset to the shared clock (workers/clock-sync.ts) and the speaker dating of our playback
// (workers/speaker-time.ts), and publishes one beat as an anchor plus the frames between beats for
// the playback worklet (memory-layout.ts, "Metronome"; worklets/click-track.ts renders them).
//
// Both mappings move slowly (drift of a few ppm, the speaker offset's median), so the worklet
// extrapolating from an anchor 50 ms old is off by nanoseconds; a step in either (a new reference
// clock, the output device's latency changing) moves the next beats with it.

import { QUANTUM_MS, SAMPLE_RATE } from '../src/shared/constants.ts';
import { MET_F64, MET_I32, type MetronomeViews } from '../src/shared/memory-layout.ts';
import { beatMs, beatTimeMs, type MetronomeState } from '../src/shared/metronome.ts';
import type { MetronomeStatus } from '../src/shared/worker-protocol.ts';
import type { SpeakerTime } from './speaker-time.ts';

/** Where the clocks stand at a tick: our clock and the page's (wall) clock now, and the shared clock minus ours (null: unknown). */
export interface ClockNow {
  ownMs: number;
  wallMs: number;
  sharedOffsetMs: number | null;
}

export class MetronomeSchedule {
  private state: MetronomeState | null = null;
  /** Our advance as the page gave it (the leader's figure in the room's awareness). */
  private pageAdvance = 0;
  /** The advance in use: the leader's fresh report on the audio channel, else pageAdvance. */
  private advance = 0;
  private runId = 0;
  /** The seqlock's count (MET_I32.GEN): even between writes. */
  private gen = 0;
  /** Shared clock minus the wall clock at the last tick (null: not scheduling). */
  private sharedMinusWall: number | null = null;
  status: MetronomeStatus = 'off';
  /** Test build (playOnBeat): the last beat struck, in run struckRun. */
  private struck = -1;
  private struckRun = -1;
  /** Test build (playOnBeat): each beat struck, with the advance (ms) and the capture stamp (wall ms) that placed it. */
  readonly struckLog: { beat: number; advanceMs: number; startMs: number }[] = [];

  constructor(private readonly v: MetronomeViews) {}

  /** The room's metronome (null: none) and our advance, ms (leader mode; else 0). */
  set(state: MetronomeState | null, advanceMs: number): void {
    if (state?.startMs !== this.state?.startMs) this.runId++;
    this.state = state;
    this.pageAdvance = Number.isFinite(advanceMs) ? advanceMs : 0;
    this.advance = this.pageAdvance;
  }

  /**
   * Publishes the schedule for the playback worklet as the clocks stand now. `reportedMs`: in
   * leader mode, the leader's latest report of our one-way delay on the audio channel (null: none
   * fresh; the page's figure stands in).
   */
  tick(clock: ClockNow, speaker: SpeakerTime, reportedMs: number | null = null): void {
    const m = this.state;
    this.advance = reportedMs ?? this.pageAdvance;
    this.sharedMinusWall = null;
    if (!m || m.startMs === null) return this.stop('off');
    if (clock.sharedOffsetMs === null) return this.stop('no-clock');
    const sharedMinusWall = clock.ownMs + clock.sharedOffsetMs - clock.wallMs;
    const sharedNow = clock.wallMs + sharedMinusWall;
    // The anchor: the beat sounding now (or beat 0 before the start).
    const k = Math.max(0, Math.floor((sharedNow + this.advance - m.startMs) / beatMs(m.bpm)));
    const at = speaker.frameOf(beatTimeMs(m, k, this.advance) - sharedMinusWall, clock.wallMs);
    const after = speaker.frameOf(beatTimeMs(m, k + 1, this.advance) - sharedMinusWall, clock.wallMs);
    if (at === null || after === null) return this.stop('no-speaker');
    this.sharedMinusWall = sharedMinusWall;
    this.status = 'running';
    this.publish(1, k, at, after - at, m);
  }

  /**
   * Test build (the playOnBeat switch): the offset, in frames, at which the quantum captured from
   * wall time `startMs` holds a beat that reaches our speaker, or −1. Each beat is struck once: in
   * the quantum whose capture span holds its time, or, if the capture stamps left a gap there
   * (they are the device's, and jitter), at the start of the first quantum after it.
   */
  beatInQuantum(startMs: number): number {
    const m = this.state;
    if (!m || m.startMs === null || this.sharedMinusWall === null) return -1;
    if (this.struckRun !== this.runId) {
      this.struckRun = this.runId;
      this.struck = -1;
    }
    const period = beatMs(m.bpm);
    const x = (startMs + this.sharedMinusWall + this.advance - m.startMs) / period;
    const n = Math.ceil(x + QUANTUM_MS / period) - 1; // the latest beat before this quantum ends
    if (n < 0 || n <= this.struck) return -1;
    const first = this.struck < 0;
    this.struck = n;
    const dt = (n - x) * period;
    if (dt < 0 && (first || dt < -period / 2)) return -1; // not a gap: a run joined late, or a long stall
    if (this.struckLog.length < 10_000) this.struckLog.push({ beat: n, advanceMs: this.advance, startMs });
    return dt <= 0 ? 0 : Math.floor((dt * SAMPLE_RATE) / 1000);
  }

  /** Stopped (or waiting): published once, not at every tick. */
  private stop(status: MetronomeStatus): void {
    const was = this.status;
    this.status = status;
    if (was === 'running' || this.gen === 0) this.publish(0, 0, 0, 0, null);
  }

  private publish(running: 0 | 1, beat: number, frame: number, perBeat: number, m: MetronomeState | null): void {
    const f = this.v.f64;
    const i32 = this.v.i32;
    // Seqlock (MET_I32.GEN): odd while the fields change.
    Atomics.store(i32, MET_I32.GEN, ++this.gen);
    f[MET_F64.RUNNING] = running;
    f[MET_F64.RUN_ID] = this.runId;
    f[MET_F64.BEAT] = beat;
    f[MET_F64.BEAT_FRAME] = frame;
    f[MET_F64.FRAMES_PER_BEAT] = perBeat;
    f[MET_F64.BEATS_PER_BAR] = m?.beatsPerBar ?? 1;
    f[MET_F64.ACCENT] = m?.accent ? 1 : 0;
    Atomics.store(i32, MET_I32.GEN, ++this.gen);
  }
}
