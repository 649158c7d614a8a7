// Recorder worker: the heard tracks of a take, one per participant plus the mix, drained from the
// heard ring the playback worklet fills (src/shared/memory-layout.ts, "Recording what we hear").
//
// The take's timeline is the input track's: frame 0 is the first input frame, captured at wall
// time inputStartMs. A heard frame belongs at the take frame when it reached our speaker, so the
// first record is placed (S0 − inputStartMs) × 48 frames in, S0 being when its render reached the
// speaker (the network worker dates it from the output device's timestamps). From there every
// record is 128 frames after the one before it by render index, whatever the ring did: all heard
// tracks and the mix share one clock (the playback worklet's) and line up to the sample. A
// participant who is away, or not yet there, is silence in their track; one who comes back keeps
// it (the page gives them the same track number). Records the ring had no room for show as a jump
// in the render index: silence in every heard track and a `heardGaps` entry.

import { MAX_PEERS, QUANTUM_FRAMES, QUANTUM_SAMPLES, SAMPLE_RATE } from '../src/shared/constants.ts';
import { HEARD_F64, HEARD_I32, HEARD_INDEX_MOD, HEARD_RECORD_HEAD, HEARD_TRACK_HEAD, HeardFlag, HeardViews, heardRecordFloats } from '../src/shared/memory-layout.ts';
import type { SpanKind, TakeAlignment, TakeInfo, TrackInfo } from '../src/shared/recorder-protocol.ts';
import { WAV_FRAME_BYTES, WAV_HEADER_BYTES, WavTrackWriter, type SyncFile } from './wav-writer.ts';

/** Frames staged per track before one write (0.33 s). */
export const STAGE_FRAMES = 125 * QUANTUM_FRAMES;
/** Render quanta a glitch flagged in one render can sound in (that one and the next two; see note()). */
export const GLITCH_REACH_QUANTA = 3;
/** Spans kept per track in the sidecar; more are counted (spansDropped). */
export const MAX_SPANS = 10_000;
/** Without a speaker reading this long after the first record, the heard tracks start unaligned at frame 0. */
export const ALIGN_WAIT_MS = 1500;

const KINDS: [number, SpanKind][] = [
  [HeardFlag.CONCEALED, 'concealed'],
  [HeardFlag.UNDERRUN, 'underrun'],
  [HeardFlag.TRIMMED, 'trimmed'],
  [HeardFlag.RESAMPLED, 'resampled'],
];

export interface HeardFiles {
  /** Open (create, empty) a track's file in the take's folder. */
  open(file: string): Promise<SyncFile>;
  /** Write the sidecar now (a track was added: recovery must know its file before audio goes in). */
  save(): Promise<void>;
}

/** One heard track (or the mix): a staging buffer in front of its WAV writer, and its sidecar entry. */
class StagedTrack {
  private readonly buf = new Float32Array(STAGE_FRAMES * 2);
  private staged = 0;
  constructor(
    readonly writer: WavTrackWriter,
    readonly info: TrackInfo,
  ) {}

  /** The take frame the next frame written lands on. */
  get end(): number {
    return this.writer.frames + this.staged;
  }

  /** `frames` frames of interleaved `src[from..]` at take frame `pos`: silence up to it, and what is before `end` dropped. */
  put(pos: number, src: Float32Array, from: number, frames: number): void {
    const end = this.end;
    if (pos + frames <= end) return;
    if (pos < end) {
      from += 2 * (end - pos);
      frames -= end - pos;
      pos = end;
    }
    if (pos > end) this.silence(pos - end);
    while (frames > 0) {
      const n = Math.min(frames, STAGE_FRAMES - this.staged);
      this.buf.set(src.subarray(from, from + 2 * n), 2 * this.staged);
      this.staged += n;
      from += 2 * n;
      frames -= n;
      if (this.staged === STAGE_FRAMES) this.flush();
    }
  }

  /** Silence up to take frame `pos` (the end of the take). */
  padTo(pos: number): void {
    if (pos > this.end) this.silence(pos - this.end);
  }

  private silence(frames: number): void {
    this.flush();
    for (let left = frames; left > 0; left -= STAGE_FRAMES) this.writer.append(null, Math.min(left, STAGE_FRAMES));
  }

  flush(): void {
    if (this.staged === 0) return;
    this.writer.append(this.buf, this.staged);
    this.staged = 0;
  }

  checkpoint(): void {
    this.flush();
    this.writer.checkpoint();
    this.report();
  }

  close(): void {
    try {
      this.flush();
    } finally {
      this.writer.close();
      this.report();
    }
  }

  report(): void {
    this.info.frames = this.writer.frames;
    this.info.bytes = WAV_HEADER_BYTES + this.writer.frames * WAV_FRAME_BYTES;
  }

  /** This record's frames at `pos` were the participant's (present) with these HeardFlag bits. */
  note(pos: number, flags: number): void {
    const at = Math.max(0, pos);
    const frames = pos + QUANTUM_FRAMES - at;
    if (frames <= 0) return;
    const present = (this.info.present ??= []);
    const last = present[present.length - 1];
    if (last && last.atFrame + last.frames === at) last.frames += frames;
    else present.push({ atFrame: at, frames });
    if (flags === 0) return;
    // A glitch flagged in this render can sound in the next two as well: the quantum playout
    // pulled (or concealed) here is played from its FIFO partly in this render and partly in the
    // next, and the crossfade back from concealment touches the quantum pulled after it. The span
    // covers every frame it can have touched.
    const spanEnd = pos + GLITCH_REACH_QUANTA * QUANTUM_FRAMES;
    const spans = (this.info.spans ??= []);
    for (const [bit, kind] of KINDS) {
      if ((flags & bit) === 0) continue;
      let merged = false;
      for (let i = spans.length - 1; i >= 0 && i >= spans.length - KINDS.length; i--) {
        const s = spans[i]!;
        if (s.kind === kind && s.atFrame + s.frames >= at) {
          s.frames = Math.max(s.frames, spanEnd - s.atFrame);
          merged = true;
          break;
        }
      }
      if (merged) continue;
      if (spans.length < MAX_SPANS) spans.push({ kind, atFrame: at, frames: spanEnd - at });
      else this.info.spansDropped = (this.info.spansDropped ?? 0) + 1;
    }
  }

  /** The take ends at frame `end`: no span reaches past it. */
  clampSpans(end: number): void {
    for (const s of this.info.spans ?? []) s.frames = Math.max(0, Math.min(s.frames, end - s.atFrame));
  }
}

export class HeardTracks {
  readonly views: HeardViews;
  private readonly rec = new Float32Array(heardRecordFloats(MAX_PEERS));
  /** A record popped but not yet written (a track of it is still being opened). */
  private pending = false;
  private opening: Promise<void> | null = null;
  private readonly tracks = new Map<number, StagedTrack>();
  private mix: StagedTrack | null = null;
  /** Unwrapped render index of the first record and of the last one written. */
  private firstIndex = -1;
  private lastIndex = -1;
  /** Take frame of the first record, once known. */
  private offset: number | null = null;
  private firstSeenMs: number | null = null;
  /** Per record: the record offset of each unique track number in it (duplicates are summed into the first). */
  private readonly seenTrack = new Int32Array(MAX_PEERS);
  private readonly seenAt = new Int32Array(MAX_PEERS);
  failure: unknown = null;

  constructor(
    views: HeardViews,
    private readonly info: TakeInfo,
    private readonly files: HeardFiles,
    /** Heard track names by number (updated by the page as participants join or rename). */
    readonly names: Map<number, string>,
    /** Wall-clock ms of the input's frame 0, or null while the input has not started. */
    private readonly inputStartMs: () => number | null,
  ) {
    this.views = views;
    info.heardGaps ??= [];
  }

  /** Create the mix's file (before any record is written). */
  async open(): Promise<void> {
    this.mix = await this.addTrack({ name: 'mix', file: 'mix.wav', bytes: 0, frames: 0, kind: 'mix' });
  }

  /** Where the heard timeline sits on the take's, once the first record and both start times are known. */
  private align(nowMs: number): boolean {
    const i32 = this.views.i32;
    if (Atomics.load(i32, HEARD_I32.STARTED) !== 1) return false;
    this.firstSeenMs ??= nowMs;
    const input = this.inputStartMs();
    let a: TakeAlignment | null = null;
    if (input !== null && Atomics.load(i32, HEARD_I32.SPEAKER_KNOWN) === 1) {
      const heard = this.views.f64[HEARD_F64.FIRST_SPEAKER_MS]!;
      a = { inputStartMs: input, heardStartMs: heard, heardOffsetFrames: Math.round(((heard - input) * SAMPLE_RATE) / 1000), by: 'speaker' };
    } else if (nowMs - this.firstSeenMs >= ALIGN_WAIT_MS) {
      a = { inputStartMs: input ?? 0, heardStartMs: 0, heardOffsetFrames: 0, by: 'none' };
    }
    if (!a) return false;
    this.info.alignment = a;
    this.offset = a.heardOffsetFrames;
    return true;
  }

  /** Everything the ring holds to the tracks. Returns early while a new track's file is opening. */
  drain(nowMs: number): void {
    if (this.opening || this.failure) return;
    if (this.offset === null && !this.align(nowMs)) return;
    const ring = this.views.ring;
    const rec = this.rec;
    for (;;) {
      if (!this.pending) {
        if (ring.available_read() < HEARD_RECORD_HEAD) return;
        ring.pop(rec, HEARD_RECORD_HEAD);
        const n = rec[0]!;
        if (!(n >= 0 && n <= MAX_PEERS && Number.isInteger(n))) throw new Error(`heard ring out of step (a record of ${n} tracks)`);
        // The writer pushed the record whole: the rest is there.
        ring.pop(rec, heardRecordFloats(n) - HEARD_RECORD_HEAD, HEARD_RECORD_HEAD);
        this.pending = true;
      }
      if (!this.write()) return; // a track is opening: this record waits for it
      this.pending = false;
    }
  }

  /** Write the popped record; false (nothing written) when it names a track not open yet. */
  private write(): boolean {
    const rec = this.rec;
    const n = rec[0]!;
    for (let i = 0; i < n; i++) {
      const t = rec[HEARD_RECORD_HEAD + i * (HEARD_TRACK_HEAD + QUANTUM_SAMPLES)]!;
      if (!this.tracks.has(t)) {
        this.openHeard(t);
        return false;
      }
    }
    // Unique tracks of this record: the same number twice (a participant's old link still playing
    // out while their new one starts) is summed, as the mix heard it.
    let unique = 0;
    for (let i = 0; i < n; i++) {
      const at = HEARD_RECORD_HEAD + i * (HEARD_TRACK_HEAD + QUANTUM_SAMPLES);
      const t = rec[at]!;
      let j = 0;
      while (j < unique && this.seenTrack[j] !== t) j++;
      if (j < unique) {
        const into = this.seenAt[j]!;
        rec[into + 1] = rec[into + 1]! | rec[at + 1]!;
        for (let k = HEARD_TRACK_HEAD; k < HEARD_TRACK_HEAD + QUANTUM_SAMPLES; k++) rec[into + k] = rec[into + k]! + rec[at + k]!;
        continue;
      }
      this.seenTrack[unique] = t;
      this.seenAt[unique] = at;
      unique++;
    }
    // The record's place on the take's timeline, from its render index.
    const raw = rec[1]!;
    let index: number;
    if (this.firstIndex < 0) {
      index = this.firstIndex = raw;
    } else {
      index = this.lastIndex + ((raw - (this.lastIndex % HEARD_INDEX_MOD) + HEARD_INDEX_MOD) % HEARD_INDEX_MOD);
      if (index > this.lastIndex + 1) {
        const at = this.offset! + (this.lastIndex + 1 - this.firstIndex) * QUANTUM_FRAMES;
        this.info.heardGaps!.push({ atFrame: Math.max(0, at), frames: (index - this.lastIndex - 1) * QUANTUM_FRAMES });
      }
    }
    this.lastIndex = index;
    const pos = this.offset! + (index - this.firstIndex) * QUANTUM_FRAMES;
    for (let j = 0; j < unique; j++) {
      const at = this.seenAt[j]!;
      const track = this.tracks.get(this.seenTrack[j]!)!;
      track.note(pos, rec[at + 1]!);
      track.put(pos, rec, at + HEARD_TRACK_HEAD, QUANTUM_FRAMES);
    }
    this.mix!.put(pos, rec, HEARD_RECORD_HEAD + n * (HEARD_TRACK_HEAD + QUANTUM_SAMPLES), QUANTUM_FRAMES);
    return true;
  }

  private openHeard(t: number): void {
    const info: TrackInfo = { name: this.names.get(t) ?? `participant ${t}`, file: `heard-${t}.wav`, bytes: 0, frames: 0, kind: 'heard', track: t, present: [], spans: [] };
    this.opening = this.addTrack(info)
      .then((track) => void this.tracks.set(t, track))
      .catch((err: unknown) => void (this.failure = err))
      .finally(() => (this.opening = null));
  }

  private async addTrack(info: TrackInfo): Promise<StagedTrack> {
    const file = await this.files.open(info.file);
    const track = new StagedTrack(new WavTrackWriter(file, SAMPLE_RATE, STAGE_FRAMES), info);
    this.info.tracks.push(info);
    await this.files.save();
    return track;
  }

  /** A participant's new name (the file keeps its number). */
  rename(t: number, name: string): void {
    this.names.set(t, name);
    const track = this.tracks.get(t);
    if (track) track.info.name = name;
  }

  setOneWay(t: number, ms: number): void {
    const track = this.tracks.get(t);
    if (track) track.info.oneWayMs = Math.round(ms * 10) / 10;
  }

  /** The take frame after the last heard frame written (0 before any). */
  get end(): number {
    return this.mix?.end ?? 0;
  }

  /** Frames rendered since the first record popped (gaps in the ring included), or null before it. */
  get renderedFrames(): number | null {
    return this.firstIndex < 0 ? null : (this.lastIndex - this.firstIndex + 1) * QUANTUM_FRAMES;
  }

  checkpoint(): void {
    this.mix?.checkpoint();
    for (const t of this.tracks.values()) t.checkpoint();
  }

  /** Heard tracks open, the mix included (each writes at the input's rate). */
  get trackCount(): number {
    return this.tracks.size + (this.mix ? 1 : 0);
  }

  /** Bytes on disk in the heard tracks and the mix, as of the last checkpoint. */
  get bytes(): number {
    let n = this.mix?.writer.size ?? 0;
    for (const t of this.tracks.values()) n += t.writer.size;
    return n;
  }

  /** Wait for a file being opened (the take is ending). */
  async settle(): Promise<void> {
    await this.opening;
  }

  /** Pad every heard track and the mix with silence to take frame `end`, and close them. */
  close(end: number): void {
    let first: unknown = null;
    for (const t of [...(this.mix ? [this.mix] : []), ...this.tracks.values()]) {
      try {
        t.padTo(end);
        t.clampSpans(end);
        t.close();
      } catch (err) {
        first ??= err;
      }
    }
    if (first) throw first;
  }
}
