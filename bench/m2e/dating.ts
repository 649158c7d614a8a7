// Dating a rig recording on the wall clock (Node, pure; bench/m2e/timed-record.ts records). parec
// delivers the monitor's audio in chunks; a chunk cannot arrive before its last frame was rendered,
// so the lower envelope of (arrival − frames so far × frame duration) is when the device rendered
// its frames, give or take the smallest delivery delay (measured here: chunk delays over the
// envelope 0.2–1 ms at the median). The envelope is a line, not a constant: PulseAudio's null
// sinks do not keep the wall clock's rate exactly (measured here: tens of ppm fast, which fits
// module-null-sink advancing its clock by each rendered chunk's duration rounded down to whole µs:
// a 512-frame chunk is 10 666.67 µs, counted as 10 666, 62.5 ppm), so its slope is the device's
// own rate against the wall clock, the truth the app's drift figure is held against.

import { RATE } from './signals.ts';

export interface TimedRecording {
  samples: Int16Array;
  /** Wall-clock ms (performance.timeOrigin + now) at which frame 0 was rendered. */
  startMs: number;
  /** Wall ms per frame: 1000 / RATE / (1 + ratePpm × 1e-6). */
  msPerFrame: number;
  /** The device's frames per wall second against the nominal rate, ppm (+: more frames than the wall clock's seconds). */
  ratePpm: number;
  /** Seconds the rate was measured over. */
  rateSeconds: number;
  /** The chunks' delivery delay over the envelope, ms: median and 90th percentile (how tight the dating is). */
  chunkDelayP50Ms: number;
  chunkDelayP90Ms: number;
  chunks: number;
  /**
   * The sink's configured latency during the recording, ms (pactl), or null where not read: a
   * null sink renders that far ahead of its own clock and its monitor hands the frames over when
   * rendered, so a frame plays, by the sink's clock, this long after the envelope dates it.
   */
  sinkLatencyMs?: number | null;
}

/**
 * Wall-clock ms of frame `frame` of `r` on the envelope: when the sink renders it if it is the last
 * frame of a render block (the earliest a frame is ever handed over for its place in the stream).
 */
export function wallOf(r: Pick<TimedRecording, 'startMs' | 'msPerFrame'>, frame: number): number {
  return r.startMs + frame * r.msPerFrame;
}

/**
 * Wall-clock ms at which frame `frame` of `r` plays by the sink's own clock. module-null-sink wakes
 * when its clock reaches the frames it rendered last and renders up to its configured latency
 * ahead (one block); the block's last frame is on the envelope, so every frame plays the
 * configured latency after its envelope time. This is the device's timeline, which a real
 * device's converter would keep; the monitor hands a frame over up to a block before it.
 */
export function playOf(r: Pick<TimedRecording, 'startMs' | 'msPerFrame' | 'sinkLatencyMs'>, frame: number): number {
  return wallOf(r, frame) + (r.sinkLatencyMs ?? 0);
}

/**
 * The envelope of chunk arrivals (wall ms) against the frames delivered by then: a least-squares
 * line through the lowest point of each of up to 20 stretches of the recording (a busy recorder
 * only ever delivers late, so each stretch's lowest point is its truest), then its offset under
 * every chunk. Pure, for the unit tests.
 */
export function envelope(arrivalsMs: readonly number[], framesAfter: readonly number[]): Omit<TimedRecording, 'samples' | 'chunks'> {
  // Skip the first chunks: the server may hand over what it had buffered before the stream began.
  const from = Math.min(5, arrivalsMs.length - 1);
  const a = arrivalsMs.slice(from);
  const f = framesAfter.slice(from);
  const nominal = 1000 / RATE;
  const stretches = Math.max(1, Math.min(20, Math.floor(a.length / 5)));
  const xs: number[] = [];
  const ys: number[] = [];
  for (let k = 0; k < stretches; k++) {
    const lo = Math.floor((k * a.length) / stretches);
    const hi = Math.floor(((k + 1) * a.length) / stretches);
    let best = lo;
    for (let i = lo; i < hi; i++) if (a[i]! - f[i]! * nominal < a[best]! - f[best]! * nominal) best = i;
    xs.push(f[best]!);
    ys.push(a[best]! - f[best]! * nominal);
  }
  const frames = f[f.length - 1]! - f[0]!;
  let slope = 0;
  // Too short a recording (under a second) to see a rate: nominal.
  if (frames > RATE && xs.length >= 3) {
    const mx = xs.reduce((p, x) => p + x, 0) / xs.length;
    const my = ys.reduce((p, y) => p + y, 0) / ys.length;
    let sxy = 0;
    let sxx = 0;
    for (let i = 0; i < xs.length; i++) {
      sxy += (xs[i]! - mx) * (ys[i]! - my);
      sxx += (xs[i]! - mx) ** 2;
    }
    slope = sxy / sxx;
  }
  const msPerFrame = nominal + slope;
  let startMs = Infinity;
  for (let i = 0; i < a.length; i++) startMs = Math.min(startMs, a[i]! - f[i]! * msPerFrame);
  const delays = a.map((x, i) => x - f[i]! * msPerFrame - startMs).sort((x, y) => x - y);
  return {
    startMs,
    msPerFrame,
    ratePpm: (nominal / msPerFrame - 1) * 1e6,
    rateSeconds: (frames * nominal) / 1000,
    chunkDelayP50Ms: delays[Math.floor(delays.length / 2)] ?? 0,
    chunkDelayP90Ms: delays[Math.floor(delays.length * 0.9)] ?? 0,
  };
}

