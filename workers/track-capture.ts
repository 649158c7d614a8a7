// Network worker: reads the microphone straight from its MediaStreamTrackProcessor stream (the
// page transfers the `readable`; Chromium then delivers each capture buffer to this worker without
// a hop through the page) and cuts it into 128-frame stereo quanta, each stamped with the capture
// time of its first frame.
//
// Why not the capture AudioWorklet: through an AudioContext the microphone passes a FIFO of up to
// ten capture buffers that is drained by the *output* device's clock. Its fill depends on the phase
// of the first capture buffer against the first render (up to one 21 ms buffer, new at every
// join) and creeps whenever the input and output clocks differ, so every join gets a different
// delay (docs/BENCHMARKS.md, mouth-to-ear). Here each buffer is sent the moment it is captured and
// the stream runs at the microphone's own clock, which the receiver's drift control follows.

import { BUS_CHANNELS, QUANTUM_FRAMES, SAMPLE_RATE } from '../src/shared/constants.ts';
import { inputPlanes, type InputChannels } from '../src/shared/input-channels.ts';

/** Frames of one capture buffer we accept without growing the staging planes (Chromium delivers 480–1024). */
const INITIAL_CHUNK_FRAMES = 4096;

export interface CaptureSink {
  /** One stereo-interleaved quantum (QUANTUM_FRAMES × 2 floats, reused: copy before the next call) and the wall-clock capture time of its first frame, µs. */
  onQuantum(frame: Float32Array, captureUs: number): void;
  /** The stream ended or failed; `reason` says why in words for the user. */
  onEnd(reason: string): void;
  /** A new source (start() while one ran) delivered its first buffer and replaced the old one. */
  onSwitched(): void;
  /**
   * The stream skipped `frames` frames before the buffer about to be delivered, seen from the
   * capture timestamps (LossWatch), up to LOSS_SEEN_WITHIN_WINDOWS windows after it happened.
   * `cause`: 'dropped', Chromium's track processor dropped its oldest buffers because this worker
   * fell behind by its whole queue (seen with three browsers on two cores as a peer rejoined: one
   * 480-frame buffer); 'device', nothing reached the track for that long: the input device or the
   * browser's capture path before the track stalled (the audio service paused; or this whole
   * page, when the audio service found no room for its data): the sound of that time is gone.
   */
  onLost(frames: number, cause: LossCause): void;
}

export class TrackCapture {
  private reader: ReadableStreamDefaultReader<AudioData> | null = null;
  /** A new source (a device switch) not delivering yet: the current one goes on until it does. */
  private pending: ReadableStreamDefaultReader<AudioData> | null = null;
  private planes: [Float32Array, Float32Array] = [new Float32Array(INITIAL_CHUNK_FRAMES), new Float32Array(INITIAL_CHUNK_FRAMES)];
  /** The quantum being assembled (stereo interleaved) and how many frames it holds. */
  private readonly frame = new Float32Array(QUANTUM_FRAMES * BUS_CHANNELS);
  private filled = 0;
  private readonly loss = new LossWatch();
  /** Capture time of `frame`'s first frame, µs (wall clock). */
  private frameUs = 0;
  /** copyTo options, reused for every buffer. */
  private readonly copyLeft: AudioDataCopyToOptions = { planeIndex: 0, format: 'f32-planar', frameCount: 0 };
  private readonly copyRight: AudioDataCopyToOptions = { planeIndex: 1, format: 'f32-planar', frameCount: 0 };
  /** The device channels read into our left and right (the page's choice; read at every buffer). */
  channels: InputChannels = 'both';

  constructor(private readonly sink: CaptureSink) {}

  /**
   * Read `readable` from now on, replacing any previous source. A device switch keeps the stream
   * going: the old source is read until the new one delivers its first buffer (opening a device
   * takes a few hundred ms, which sent nothing and left the listeners ~0.9 s of underruns on the rig).
   */
  start(readable: ReadableStream<AudioData>): void {
    const reader = readable.getReader();
    if (this.pending) void this.pending.cancel().catch(() => {});
    if (this.reader) this.pending = reader;
    else {
      this.reader = reader;
      this.filled = 0;
      this.loss.reset();
    }
    void this.pump(reader);
  }

  /**
   * A take stops: the frames lost lately that the watch has begun to see but not yet confirmed
   * (LossWatch.settle), reported now through onLost, so the take's input ends on the clock too.
   */
  settleLoss(): void {
    const lost = this.loss.settle();
    if (lost > 0) this.sink.onLost(lost, this.loss.cause);
  }

  stop(): void {
    for (const r of [this.reader, this.pending]) if (r) void r.cancel().catch(() => {});
    this.reader = this.pending = null;
  }

  private async pump(reader: ReadableStreamDefaultReader<AudioData>): Promise<void> {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (reader === this.pending && !done) {
          // The new source delivers: it takes over from here (the quantum being assembled goes on
          // with its samples: a seam, no gap).
          const old = this.reader;
          this.reader = reader;
          this.pending = null;
          if (old) void old.cancel().catch(() => {});
          this.loss.reset(); // another device: its own timeline
          this.sink.onSwitched();
        }
        if (reader !== this.reader) {
          value?.close();
          if (reader === this.pending) this.pending = null; // the new source ended before it delivered
          return; // replaced or stopped
        }
        if (done) {
          if (!this.promotePending()) this.sink.onEnd('The microphone stopped delivering audio (the device was unplugged or the track ended).');
          return;
        }
        try {
          this.take(value);
        } finally {
          value.close();
        }
      }
    } catch (err) {
      if (reader === this.reader && !this.promotePending()) {
        this.sink.onEnd(`Reading the microphone failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  /**
   * The current source ended. A new one already opening (the page switched, perhaps because this
   * one went away) takes over now, and that is the switch; else there is no source. Returns
   * whether one took over.
   */
  private promotePending(): boolean {
    this.reader = this.pending;
    this.pending = null;
    if (!this.reader) return false;
    this.loss.reset();
    this.sink.onSwitched();
    return true;
  }

  /** Append one capture buffer; emit every quantum it completes. */
  private take(data: AudioData): void {
    if (data.sampleRate !== SAMPLE_RATE) throw new Error(`the microphone runs at ${data.sampleRate} Hz, not ${SAMPLE_RATE} Hz`);
    const n = data.numberOfFrames;
    if (n > this.planes[0].length) this.planes = [new Float32Array(n), new Float32Array(n)]; // a larger device buffer: once
    const [l, r] = this.planes;
    const [left, right] = inputPlanes(this.channels, data.numberOfChannels);
    this.copyLeft.frameCount = this.copyRight.frameCount = n;
    this.copyLeft.planeIndex = left;
    this.copyRight.planeIndex = right;
    data.copyTo(l, this.copyLeft);
    if (right !== left) data.copyTo(r, this.copyRight);
    else r.set(l.subarray(0, n));
    // AudioData.timestamp is the capture time of the buffer's first frame on this worker's
    // performance timeline (µs); the wire carries wall-clock µs.
    const firstUs = performance.timeOrigin * 1000 + data.timestamp;
    const lost = this.loss.add(firstUs, n, (performance.timeOrigin + performance.now()) * 1000);
    if (lost > 0) this.sink.onLost(lost, this.loss.cause);
    const frame = this.frame;
    for (let i = 0; i < n; i++) {
      if (this.filled === 0) this.frameUs = firstUs + (i * 1e6) / SAMPLE_RATE;
      const o = 2 * this.filled;
      frame[o] = l[i]!;
      frame[o + 1] = r[i]!;
      if (++this.filled === QUANTUM_FRAMES) {
        this.filled = 0;
        this.sink.onQuantum(frame, Math.round(this.frameUs));
      }
    }
  }
}

/** Capture buffers per loss window (about half a second at 480 frames). */
export const LOSS_WINDOW_BUFFERS = 50;
/**
 * A loss is seen within this many windows of it: the window it fell in may still show the old
 * lowest, the next shows the step, and the one after confirms it.
 */
export const LOSS_SEEN_WITHIN_WINDOWS = 3;

/**
 * At a take's stop, the buffers of the window still open that speak for or against a loss (with
 * fewer, the last whole window's step stands alone).
 */
export const SETTLE_MIN_BUFFERS = 10;

/** Why frames were lost (CaptureSink.onLost). */
export type LossCause = 'dropped' | 'device';

/**
 * A buffer read this long after its capture time (ms) shows a backlog: the track processor queues
 * ten buffers (about 100 ms) before it drops the oldest, so the buffers read around a drop are
 * that old; around a pause of the device they come fresh (a few ms, tens on a loaded machine).
 */
export const BACKLOG_MS = 50;

/**
 * Buffers the track lost, from their timestamps. A single timestamp is no proof: measured here
 * (Chromium 156, a page feeding the track from an AudioContext), they jump back and forth by a
 * whole buffer with nothing lost. What a loss does is move all later timestamps ahead of the
 * frames delivered, for good. So: per buffer, how far the timestamp is ahead of the frames
 * delivered since the start; per window, the lowest of that; when a window's lowest is at least
 * half a buffer above the base (the last window's), and the next window's is too, that is a loss,
 * of whole buffers: time the stream did not deliver, which the take fills with silence so the
 * input keeps the clock's time. One window alone is not taken as a step, so a stretch of late
 * stamps that comes back does not shift the input for good. (In the 600 s browser takes the
 * fake microphone's page paused now and then: its WAV went on without a gap after the silence,
 * later by as much; a real microphone's sound does not pause, and the frames are gone.) Drift
 * between the device's clock and the wall clock (under 5 frames a second at 100 ppm) is
 * followed window by window. Why: the oldest buffer's age when it was read, in the window of the
 * step and the one before. A drop happens only behind a backlog (BACKLOG_MS); without one, the
 * device or the browser's capture path before the track delivered nothing for that time (seen
 * when this machine's audio service was paused, and when the whole page was: the audio service
 * then had no room for its data; a fake microphone's file then either skips that time or
 * resumes where it stopped). A drop in the processor itself was not produced in a browser here
 * (stopping the page 300 ms lost the data upstream); the unit tests cover it.
 */
export class LossWatch {
  private startUs = 0;
  private frames = 0;
  private base: number | null = null;
  private windowMin = Infinity;
  private count = 0;
  private started = false;
  /** The step the last window showed, still to be confirmed by this one, or null. */
  private pending: number | null = null;
  /** The oldest age at read (ms) in this window, in the window before, and when the step was first seen. */
  private windowAge = 0;
  private lastWindowAge = 0;
  private pendingAge = 0;
  /** Why the last loss reported happened. */
  cause: LossCause = 'dropped';
  /** Frames of the last buffer added (the unit of a loss). */
  private lastN = 0;

  reset(): void {
    this.started = false;
    this.base = null;
    this.windowMin = Infinity;
    this.count = 0;
    this.pending = null;
    this.windowAge = this.lastWindowAge = this.pendingAge = 0;
  }

  /**
   * A buffer of `n` frames captured at `firstUs`, read at `readUs` (both wall clock, µs); returns
   * the frames lost before it was seen (0 mostly), and sets `cause` when not 0.
   */
  add(firstUs: number, n: number, readUs: number): number {
    if (!this.started) {
      this.started = true;
      this.startUs = firstUs;
      this.frames = 0;
    }
    const ahead = ((firstUs - this.startUs) * SAMPLE_RATE) / 1e6 - this.frames;
    this.frames += n;
    this.lastN = n;
    if (ahead < this.windowMin) this.windowMin = ahead;
    const age = (readUs - firstUs) / 1000;
    if (age > this.windowAge) this.windowAge = age;
    if (++this.count < LOSS_WINDOW_BUFFERS) return 0;
    const low = this.windowMin;
    const around = Math.max(this.windowAge, this.lastWindowAge);
    this.lastWindowAge = this.windowAge;
    this.windowAge = 0;
    this.windowMin = Infinity;
    this.count = 0;
    if (this.base === null) {
      this.base = low;
      return 0;
    }
    const step = low - this.base;
    if (step < n / 2) {
      this.pending = null;
      this.base = low; // drift (or a window of early timestamps): follow it
      return 0;
    }
    if (this.pending === null) {
      this.pending = step; // a window of late timestamps, or a loss: the next window says which
      this.pendingAge = around;
      return 0;
    }
    return this.confirm(Math.min(step, this.pending), n, low);
  }

  /**
   * The stream stops being read (a take's end): decide now what the next windows would have. A
   * step the last whole window showed is a loss (unless SETTLE_MIN_BUFFERS or more of the open
   * window say otherwise); so is a step the open window shows alone over SETTLE_MIN_BUFFERS or
   * more. No window will come to prove either a stretch of late stamps; if one was, the take
   * ends in one buffer of silence more, after all its sound, where a loss missed would put its
   * last second early against the heard tracks. Returns the frames, as add() does; only a loss
   * inside the open window's first buffers stays unseen. Reading goes on as before.
   */
  settle(): number {
    if (this.base === null || this.lastN === 0) return 0;
    const open = this.count >= SETTLE_MIN_BUFFERS ? this.windowMin - this.base : null;
    if (open !== null && open < this.lastN / 2) return 0;
    const step = this.pending === null ? open : open === null ? this.pending : Math.min(open, this.pending);
    if (step === null) return 0;
    if (this.pending === null) this.pendingAge = Math.max(this.windowAge, this.lastWindowAge);
    const low = this.base + step;
    const lost = this.confirm(step, this.lastN, low);
    this.windowMin = Infinity;
    this.windowAge = 0;
    this.count = 0;
    return lost;
  }

  /** A step of `step` frames, seen in windows whose lowest is now `low`, is a loss of whole `n`-frame buffers. */
  private confirm(step: number, n: number, low: number): number {
    const lost = Math.round(step / n) * n;
    this.pending = null;
    this.cause = this.pendingAge >= BACKLOG_MS ? 'dropped' : 'device';
    this.frames += lost; // the silence the sink records in their place counts as delivered
    this.base = low - lost;
    return lost;
  }
}
