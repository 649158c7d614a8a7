// Recorder worker (dedicated, named tutti-recorder): writes takes to the Origin Private File
// System. While recording it drains the record ring the network worker fills (memory-layout.ts)
// every 50 ms into the take's 24-bit WAV input track through a synchronous access handle, and the
// heard ring the playback worklet fills into one track per participant and the mix
// (heard-tracks.ts, which also lines them up with the input; take-clocks.ts measures how far
// the two clocks drift apart over the take), checkpoints
// the file once a second (crash safety, wav-writer.ts), watches the storage left and stops cleanly
// before it runs out. Off the audio thread and off the network worker: a slow disk delays only
// this worker, and the ring covers 2 s of it. Also lists, deletes and repairs takes.

/// <reference lib="webworker" />

import { QUANTUM_FRAMES, QUANTUM_SAMPLES, SAMPLE_RATE } from '../src/shared/constants.ts';
import { HeardViews, REC_F64, REC_I32, RecordViews, type RecordMemory } from '../src/shared/memory-layout.ts';
import type { FromRecorder, TakeInfo, ToRecorder } from '../src/shared/recorder-protocol.ts';
import { HeardTracks } from './heard-tracks.ts';
import { TakeClocks } from './take-clocks.ts';
import { takeArchive } from './take-export.ts';
import { deleteTake, listTakes, readSidecar, recoverTakes, takeDir, writeSidecar } from './take-store.ts';
import { WAV_FRAME_BYTES, WavTrackWriter, WriteRefused } from './wav-writer.ts';

declare const self: DedicatedWorkerGlobalScope;

const DRAIN_MS = 50;
/** Quanta converted and written per append (up to 0.33 s). */
const CHUNK_QUANTA = 125;
/** One track's write rate; a take writes one per heard participant and the mix besides the input. */
const BYTES_PER_SECOND = SAMPLE_RATE * WAV_FRAME_BYTES;
/** Warn when the storage left holds less than this much more recording. */
const WARN_SECONDS = 120;
/** Stop cleanly when it holds less than this (before the browser refuses a write). */
const STOP_SECONDS = 5;
/** While heard tracks record, the sidecar (their spans and presence) is rewritten this often (s). */
const SIDECAR_EVERY_TICKS = 5;

function post(msg: FromRecorder): void {
  self.postMessage(msg);
}

class ActiveTake {
  readonly views: RecordViews;
  private readonly chunk = new Float32Array(CHUNK_QUANTA * QUANTUM_SAMPLES);
  private overflowsSeen = 0;
  private lostSeen = 0;
  private pausedSeen = 0;
  /** The capture clock (input) against the output clock (heard), over the take. */
  private readonly clocks = new TakeClocks();
  private storageLeft: number | null = null;
  private warning: string | null = null;
  private readonly timers: ReturnType<typeof setInterval>[];
  private ending = false;
  /** Time spent in drain() and the checkpoint since the last status, ms. */
  private busyMs = 0;
  private lastStatusAt = performance.now();
  private ticks = 0;
  /** Gaps (input and heard) the sidecar on disk lists. */
  private gapsSaved = 0;

  constructor(
    readonly info: TakeInfo,
    private readonly dir: FileSystemDirectoryHandle,
    private readonly input: WavTrackWriter,
    memory: RecordMemory,
    /** The heard tracks and the mix (null: the input alone). */
    readonly heard: HeardTracks | null,
  ) {
    this.views = new RecordViews(memory);
    this.timers = [setInterval(() => this.drain(), DRAIN_MS), setInterval(() => void this.tick(), 1000)];
  }

  /** Everything in the ring to the file, and silence for quanta the ring had no room for. */
  private drain(): void {
    if (this.ending) return;
    const t0 = performance.now();
    try {
      this.drainAll();
      if (this.heard?.failure) throw this.heard.failure;
    } catch (err) {
      void this.end(err);
    }
    this.busyMs += performance.now() - t0;
  }

  /** Wall-clock ms of the input track's frame 0, once the network worker pushed it. */
  inputStartMs(): number | null {
    return Atomics.load(this.views.i32, REC_I32.STARTED) === 1 ? this.views.f64[REC_F64.FIRST_CAPTURE_MS]! : null;
  }

  private drainAll(final = false): void {
    const ring = this.views.ring;
    const lost = Atomics.load(this.views.i32, REC_I32.LOST_FRAMES);
    if (lost !== this.lostSeen) {
      // The microphone's stream lost frames; the network worker put as much silence in the ring.
      // Of them, those the device never delivered (PAUSED_FRAMES, added before LOST_FRAMES).
      const paused = Atomics.load(this.views.i32, REC_I32.PAUSED_FRAMES);
      const atFrame = this.input.frames + Math.floor(ring.available_read() / 2);
      const device = Math.min(lost - this.lostSeen, paused - this.pausedSeen);
      if (device > 0) this.info.gaps.push({ atFrame, frames: device, cause: 'device' });
      if (lost - this.lostSeen - device > 0) this.info.gaps.push({ atFrame: atFrame + device, frames: lost - this.lostSeen - device, cause: 'dropped' });
      this.lostSeen = lost;
      this.pausedSeen += device;
    }
    const overflows = Atomics.load(this.views.i32, REC_I32.OVERFLOWS);
    if (overflows !== this.overflowsSeen) {
      // The ring was full: those quanta are lost; silence keeps the track aligned with the clock.
      const quanta = overflows - this.overflowsSeen;
      this.overflowsSeen = overflows;
      this.info.gaps.push({ atFrame: this.input.frames, frames: quanta * QUANTUM_FRAMES });
      for (let q = 0; q < quanta; q += CHUNK_QUANTA) this.input.append(null, Math.min(CHUNK_QUANTA, quanta - q) * QUANTUM_FRAMES);
    }
    for (;;) {
      const quanta = Math.min(CHUNK_QUANTA, Math.floor(ring.available_read() / QUANTUM_SAMPLES));
      if (quanta === 0) break;
      ring.pop(this.chunk, quanta * QUANTUM_SAMPLES);
      this.input.append(this.chunk, quanta * QUANTUM_FRAMES);
    }
    const rest = ring.available_read() & ~1; // frames of a partial quantum (after silence for a loss)
    if (final && rest > 0) {
      ring.pop(this.chunk, rest);
      this.input.append(this.chunk, rest / 2);
    }
    this.heard?.drain(performance.now());
    this.saveNewGaps();
    const heardFrames = this.heard?.renderedFrames ?? null;
    if (heardFrames !== null && this.input.frames > 0) this.clocks.add(this.input.frames, heardFrames);
  }

  /**
   * A gap just went into a track (silence for frames lost): the sidecar says so now, not at the
   * next periodic rewrite, so a take recovered after a crash explains every silence it holds
   * (the silence reaches the disk with the next append; the sidecar follows within one write).
   */
  private saveNewGaps(): void {
    const gaps = this.info.gaps.length + (this.info.heardGaps?.length ?? 0);
    if (gaps === this.gapsSaved) return;
    this.gapsSaved = gaps;
    void writeSidecar(this.dir, this.info).catch((err: unknown) => void this.end(err));
  }

  /** The two clocks' drift so far, into the sidecar's alignment. */
  private noteClocks(): void {
    const ppm = this.clocks.ppm();
    const drift = this.clocks.driftFrames(this.input.frames);
    const a = this.info.alignment;
    if (ppm === null || drift === null || !a) return;
    a.clockPpm = Math.round(ppm * 10) / 10;
    a.endDriftFrames = Math.round(drift);
  }

  private async tick(): Promise<void> {
    if (this.ending) return;
    const t0 = performance.now();
    try {
      this.input.checkpoint();
      this.heard?.checkpoint();
    } catch (err) {
      void this.end(err);
      return;
    }
    this.busyMs += performance.now() - t0;
    if (this.info.startedAt === '' && Atomics.load(this.views.i32, REC_I32.STARTED) === 1) {
      this.info.startedAt = new Date(this.views.f64[REC_F64.FIRST_CAPTURE_MS]!).toISOString();
      await writeSidecar(this.dir, this.info);
    } else if (this.heard && ++this.ticks % SIDECAR_EVERY_TICKS === 0) {
      this.noteClocks();
      await writeSidecar(this.dir, this.info); // the heard tracks' spans so far, for a recovery
    }
    const est = await navigator.storage.estimate().catch(() => null);
    this.storageLeft = est && est.quota !== undefined && est.usage !== undefined ? Math.max(0, est.quota - est.usage) : null;
    const secondsLeft = this.storageLeft === null ? Infinity : this.storageLeft / (BYTES_PER_SECOND * (1 + (this.heard?.trackCount ?? 0)));
    this.warning = secondsLeft < WARN_SECONDS ? `Storage is nearly full: about ${Math.floor(secondsLeft)} s of recording left. The take stops by itself before it runs out.` : null;
    const now = performance.now();
    const busy = Math.round((this.busyMs / ((now - this.lastStatusAt) / 1000)) * 100) / 100;
    this.busyMs = 0;
    this.lastStatusAt = now;
    post({ type: 'status', id: this.info.id, seconds: this.input.frames / SAMPLE_RATE, bytes: this.input.size + (this.heard?.bytes ?? 0), storageLeftBytes: this.storageLeft, warning: this.warning, busyMsPerSecond: busy });
    if (secondsLeft < STOP_SECONDS) void this.end('quota');
  }

  /**
   * Finish the take: the rest of the ring to disk, the file closed, the sidecar final. `why` is
   * undefined for Stop, 'quota' for a clean stop before the storage runs out, or a write error.
   */
  async end(why?: unknown, oneWayMs: Record<number, number> = {}): Promise<void> {
    if (this.ending) return;
    this.ending = true;
    for (const t of this.timers) clearInterval(t);
    let message: string | null = null;
    if (why === undefined) {
      try {
        await this.heard?.settle();
        this.drainAll();
        await this.heard?.settle(); // a track that joined in the last 50 ms
        this.drainAll(true);
        if (this.heard?.failure) throw this.heard.failure;
        this.noteClocks();
        // Every track as long as the longest: the input and the heard tracks run on two clocks.
        const end = Math.max(this.input.frames, this.heard?.end ?? 0);
        for (let left = end - this.input.frames; left > 0; left -= CHUNK_QUANTA * QUANTUM_FRAMES) this.input.append(null, Math.min(left, CHUNK_QUANTA * QUANTUM_FRAMES));
        if (this.heard) {
          for (const [t, ms] of Object.entries(oneWayMs)) this.heard.setOneWay(Number(t), ms);
          this.heard.close(end);
        }
      } catch (err) {
        why = err;
      }
    }
    if (why !== undefined) {
      const full = why === 'quota' || (why instanceof WriteRefused && why.reason instanceof DOMException && why.reason.name === 'QuotaExceededError');
      this.info.endedBy = full ? 'quota' : 'error';
      message = full
        ? 'Recording stopped: the storage for this site is full. Everything up to now is kept; download or delete takes to make room.'
        : `Recording stopped: ${why instanceof Error ? why.message : String(why)}. Everything up to now is kept.`;
    }
    try {
      this.input.close();
    } catch {
      // The take keeps what checkpoints wrote; the next start's recovery repairs the header.
    }
    if (why !== undefined) {
      try {
        this.heard?.close(0);
      } catch {
        // As above.
      }
    }
    const track = this.info.tracks[0]!;
    track.frames = this.input.frames;
    track.bytes = this.input.size;
    this.info.state = 'complete';
    if (this.info.startedAt === '') this.info.startedAt = new Date().toISOString();
    if (active === this) active = null;
    await writeSidecar(this.dir, this.info);
    post({ type: 'stopped', take: this.info, message });
  }
}

let active: ActiveTake | null = null;

async function start(msg: Extract<ToRecorder, { type: 'start' }>): Promise<void> {
  if (active) await active.end();
  const dir = await takeDir(msg.id, true);
  const info: TakeInfo = {
    id: msg.id,
    title: msg.title,
    startedAt: '',
    sampleRate: SAMPLE_RATE,
    bitsPerSample: 24,
    channels: 2,
    tracks: [{ name: 'input', file: 'input.wav', bytes: 0, frames: 0, kind: 'input' }],
    gaps: [],
    state: 'recording',
  };
  const handle = await (await dir.getFileHandle('input.wav', { create: true })).createSyncAccessHandle();
  const writer = new WavTrackWriter(handle, SAMPLE_RATE, CHUNK_QUANTA * QUANTUM_FRAMES);
  await writeSidecar(dir, info);
  let heard: HeardTracks | null = null;
  let take: ActiveTake | null = null;
  if (msg.heard) {
    const names = new Map(Object.entries(msg.names).map(([t, name]) => [Number(t), name] as const));
    const files = {
      open: async (file: string) => (await dir.getFileHandle(file, { create: true })).createSyncAccessHandle(),
      save: () => writeSidecar(dir, info),
    };
    heard = new HeardTracks(new HeardViews(msg.heard), info, files, names, () => take?.inputStartMs() ?? null);
    await heard.open();
  }
  take = active = new ActiveTake(info, dir, writer, msg.input, heard);
}

async function handle(msg: ToRecorder): Promise<void> {
  switch (msg.type) {
    case 'start':
      await start(msg);
      return;
    case 'stop': {
      const take = active;
      active = null;
      await take?.end(undefined, msg.oneWayMs);
      return;
    }
    case 'archive': {
      const dir = await takeDir(msg.id);
      const take = await readSidecar(dir);
      if (!take) throw new Error(`take ${msg.id} has no readable sidecar`);
      if (take.state === 'recording') throw new Error('this take is still recording: stop it first');
      const blob = await takeArchive(take, async (file) => (await dir.getFileHandle(file)).getFile(), msg.asPlayed);
      post({ type: 'archive', id: msg.id, name: `${msg.id}${msg.asPlayed ? '-as-played' : ''}.zip`, blob });
      return;
    }
    case 'track-names':
      for (const [t, name] of Object.entries(msg.names)) active?.heard?.rename(Number(t), name);
      return;
    case 'recover': {
      const recovered = await recoverTakes(active?.info.id ?? null);
      post({ type: 'takes', takes: await listTakes(), recovered });
      return;
    }
    case 'list':
      post({ type: 'takes', takes: await listTakes(), recovered: [] });
      return;
    case 'delete':
      if (msg.id === active?.info.id) throw new Error('this take is still recording: stop it first');
      await deleteTake(msg.id);
      post({ type: 'takes', takes: await listTakes(), recovered: [] });
      return;
    default:
      msg satisfies never;
  }
}

// Messages are handled one at a time, in order (a stop right after a start waits for the start).
let queue: Promise<void> = Promise.resolve();
self.onmessage = (ev: MessageEvent<ToRecorder>) => {
  const msg = ev.data;
  queue = queue.then(() => handle(msg)).catch((err: unknown) => post({ type: 'error', message: err instanceof Error ? err.message : String(err) }));
};
