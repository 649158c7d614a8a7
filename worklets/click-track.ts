// Playback worklet: the metronome's clicks. Each render quantum it reads the beat schedule the
// network worker publishes (memory-layout.ts, "Metronome"), starts the click of any beat that
// falls in this quantum at its sample, and adds the sounding click to what leaves for the speaker,
// after the mix and its recording: a click is never in a take, and never in anyone's send stream
// (it exists only here). It then says which beat it rendered, when, for the page's beat light.
// Real-time code: the two click sounds are made once, render() allocates nothing.
// Imported by worklets/playback.worklet.ts; unit-tested in Node.

import { QUANTUM_FRAMES } from '../src/shared/constants.ts';
import { MET_F32, MET_F64, MET_I32, type MetronomeViews } from '../src/shared/memory-layout.ts';

/** A click lasts 30 ms: a decaying tone that starts at full amplitude, so its onset is its first sample. */
const CLICK_MS = 30;
const DECAY_MS = 4;
/**
 * A beat whose sample has already passed is still played, at once, if it is at most this late:
 * a click a step late beats a hole in the pulse. Such a beat is one an output step carried into
 * the past (the machine stalled our audio thread for 5–40 ms; the schedule, following the step,
 * dates the beat that many ms earlier on our output's frames). A beat later than this is skipped:
 * the schedule jumped (a new reference clock) or this run was joined mid-beat, and a click that
 * late sounds like a stray, not the beat.
 */
const MAX_LATE_MS = 50;

/** One click: `freq` Hz, peak `amp`, cosine-phased so sample 0 is the peak. */
export function clickSound(sampleRate: number, freq: number, amp: number): Float32Array {
  const n = Math.round((CLICK_MS / 1000) * sampleRate);
  const out = new Float32Array(n);
  const tau = (DECAY_MS / 1000) * sampleRate;
  for (let i = 0; i < n; i++) out[i] = amp * Math.exp(-i / tau) * Math.cos((2 * Math.PI * freq * i) / sampleRate);
  return out;
}

const F = MET_F64;

export class ClickTrack {
  private readonly accent: Float32Array;
  private readonly plain: Float32Array;
  /** The schedule last read whole (MET_F64's fields up to CLICKED_AT), and scratch for the next read. */
  private readonly s = new Float64Array(F.CLICKED_AT);
  private readonly next = new Float64Array(F.CLICKED_AT);
  private gen = -1;
  private runId = NaN;
  /** The last beat of this run whose click started (or that was too late to start). */
  private lastBeat = -1;
  /** The sounding click, and the index of its sample at the next quantum's first frame. */
  private sound: Float32Array | null = null;
  private pos = 0;
  private readonly maxLateFrames: number;

  constructor(private readonly v: MetronomeViews, private readonly sampleRate: number) {
    this.accent = clickSound(sampleRate, 1760, 1);
    this.plain = clickSound(sampleRate, 1320, 0.6);
    this.maxLateFrames = Math.round((MAX_LATE_MS / 1000) * sampleRate);
  }

  /** Adds the click to the quantum starting at context frame `frame` (`outR` may equal `outL`). */
  render(outL: Float32Array, outR: Float32Array, frame: number): void {
    this.read();
    const s = this.s;
    if (s[F.RUN_ID] !== this.runId) {
      this.runId = s[F.RUN_ID]!;
      this.lastBeat = -1;
    }
    const per = s[F.FRAMES_PER_BEAT]!;
    if (s[F.RUNNING] === 1 && per > 0) {
      // The latest beat that starts at or before this quantum's last frame.
      const n = s[F.BEAT]! + Math.floor((frame + QUANTUM_FRAMES - 1 - s[F.BEAT_FRAME]!) / per);
      if (n >= 0 && n > this.lastBeat) {
        this.lastBeat = n;
        const at = s[F.BEAT_FRAME]! + (n - s[F.BEAT]!) * per;
        // A beat whose sample has passed starts now if it is at most MAX_LATE_MS late, else it
        // is skipped (see MAX_LATE_MS).
        if (at > frame - this.maxLateFrames) {
          const offset = Math.min(QUANTUM_FRAMES - 1, Math.max(0, Math.round(at - frame)));
          const beats = s[F.BEATS_PER_BAR]!;
          this.sound = s[F.ACCENT] === 1 && n % beats === 0 ? this.accent : this.plain;
          this.pos = -offset;
          this.v.f64[F.CLICKED_AT] = (frame + offset) / this.sampleRate;
          Atomics.store(this.v.i32, MET_I32.CLICKED_BEAT, n);
        }
      }
    }
    const sound = this.sound;
    if (!sound) return;
    const g = this.v.f32[MET_F32.GAIN]!;
    const pos = this.pos;
    for (let f = 0; f < QUANTUM_FRAMES; f++) {
      const i = pos + f;
      if (i < 0 || i >= sound.length) continue;
      const x = sound[i]! * g;
      outL[f] = clamp(outL[f]! + x);
      if (outR !== outL) outR[f] = clamp(outR[f]! + x);
    }
    this.pos = pos + QUANTUM_FRAMES;
    if (this.pos >= sound.length) this.sound = null;
  }

  /** The schedule, if the worker is not writing it this instant (seqlock, MET_I32.GEN). */
  private read(): void {
    const i32 = this.v.i32;
    const g = Atomics.load(i32, MET_I32.GEN);
    if (g === this.gen || (g & 1) === 1) return;
    const f64 = this.v.f64;
    const next = this.next;
    for (let k = 0; k < next.length; k++) next[k] = f64[k]!;
    if (Atomics.load(i32, MET_I32.GEN) !== g) return;
    this.s.set(next);
    this.gen = g;
  }
}

function clamp(x: number): number {
  return x > 1 ? 1 : x < -1 ? -1 : x;
}
