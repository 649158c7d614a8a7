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
  /** Each chunk's arrival (wall ms) and the frames delivered with it (a recorder's; for a trace of the device's timing over the recording). */
  arrivalsMs?: number[];
  framesAfter?: number[];
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
 * The envelope of chunk arrivals (wall ms) against the frames delivered by then: the line under
 * every point that lies closest to them on average, which is the edge of their lower convex hull
 * over the mean frame count (the linear-programming estimate of clock skew from one-way delays,
 * Moon, Skelly and Towsley, 1999). Why not a fit through each stretch's lowest point: a sink
 * renders blocks (21.33 ms at `micsink`) and `parec` gets chunks of its own size, so when the two
 * beat slowly a stretch can hold no chunk that ends with a block, its lowest point sits up to a
 * block high, and a 73 s line tilted by tens of ppm (−46 ppm for a sink that can only run fast).
 * The hull leans only on the lowest points wherever they are. Pure, for the unit tests.
 */
export function envelope(arrivalsMs: readonly number[], framesAfter: readonly number[]): Omit<TimedRecording, 'samples' | 'chunks'> {
  // Skip the first chunks: the server may hand over what it had buffered before the stream began.
  const from = Math.min(5, arrivalsMs.length - 1);
  const a = arrivalsMs.slice(from);
  const f = framesAfter.slice(from);
  const nominal = 1000 / RATE;
  const ys = a.map((x, i) => x - f[i]! * nominal);
  // Lower hull (monotone chain; frames only grow).
  const hull: number[] = [];
  for (let i = 0; i < f.length; i++) {
    while (hull.length >= 2) {
      const p = hull[hull.length - 2]!;
      const q = hull[hull.length - 1]!;
      // Drop q when it lies on or above the segment p → i.
      if ((ys[q]! - ys[p]!) * (f[i]! - f[p]!) >= (ys[i]! - ys[p]!) * (f[q]! - f[p]!)) hull.pop();
      else break;
    }
    hull.push(i);
  }
  const frames = f[f.length - 1]! - f[0]!;
  let slope = 0;
  // Too short a recording (under a second) to see a rate: nominal.
  if (frames > RATE && hull.length >= 2) {
    const mean = f.reduce((p, x) => p + x, 0) / f.length;
    let k = 0;
    while (k < hull.length - 2 && f[hull[k + 1]!]! < mean) k++;
    const p = hull[k]!;
    const q = hull[k + 1]!;
    slope = (ys[q]! - ys[p]!) / (f[q]! - f[p]!);
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

