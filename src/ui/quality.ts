// Pure measurement arithmetic for the page (main thread): the connection quality label and the
// estimated one-way delay. No DOM, no engine: unit-tested in tests/unit/measure.test.ts and
// documented, threshold by threshold, in docs/MEASUREMENT.md.

import { QUANTUM_MS } from '../shared/constants.ts';
import { median } from '../shared/median.ts';
import { framesExpected, glitches } from '../shared/peer-counts.ts';
import type { PeerStats } from '../shared/worker-protocol.ts';

export type QualityLabel = 'Excellent' | 'Good' | 'Fair' | 'Poor';

/** What the label is judged on, over a recent window (see `qualityInput`). */
export interface QualityInput {
  /** Mean of the DataChannel round trips in the window, ms. */
  rttAvgMs: number;
  /** Largest round trip in the window, ms. */
  rttMaxMs: number;
  /** Jitter-buffer target in ms (target depth × one quantum). */
  bufferMs: number;
  /**
   * Glitches a listener hears in the window, % of frames expected: frames late or lost, quanta the
   * playout waited on an empty buffer (underruns) and quanta skipped to cut latency (trims).
   */
  dropPercent: number;
}

export interface QualityTier {
  label: Exclude<QualityLabel, 'Poor'>;
  /** Every figure must be strictly below its limit. */
  rttAvgMs: number;
  rttMaxMs: number;
  bufferMs: number;
  dropPercent: number;
}

/**
 * Best tier first. Excellent is JackTrip Virtual Studio's (average RTT < 10 ms, max < 15 ms, jitter
 * buffer < 6 ms) plus a drop limit; the others widen each limit step by step (docs/MEASUREMENT.md).
 */
export const QUALITY_TIERS: readonly QualityTier[] = [
  { label: 'Excellent', rttAvgMs: 10, rttMaxMs: 15, bufferMs: 6, dropPercent: 0.1 },
  { label: 'Good', rttAvgMs: 25, rttMaxMs: 40, bufferMs: 12, dropPercent: 0.5 },
  { label: 'Fair', rttAvgMs: 50, rttMaxMs: 80, bufferMs: 25, dropPercent: 2 },
];

export interface Quality {
  label: QualityLabel;
  /** Why it is not one tier better: the limits of the next tier up that were missed. Empty for Excellent. */
  reasons: string[];
}

/** The best tier whose every limit the input stays strictly below; Poor when none. */
export function quality(q: QualityInput): Quality {
  let reasons: string[] = [];
  for (const tier of QUALITY_TIERS) {
    const missed = [
      ...(q.rttAvgMs < tier.rttAvgMs ? [] : [`average RTT ${fmt(q.rttAvgMs)} ms ≥ ${tier.rttAvgMs} ms`]),
      ...(q.rttMaxMs < tier.rttMaxMs ? [] : [`max RTT ${fmt(q.rttMaxMs)} ms ≥ ${tier.rttMaxMs} ms`]),
      ...(q.bufferMs < tier.bufferMs ? [] : [`jitter buffer ${fmt(q.bufferMs)} ms ≥ ${tier.bufferMs} ms`]),
      ...(q.dropPercent < tier.dropPercent ? [] : [`glitches (late, lost, underrun, trimmed) ${fmt(q.dropPercent)} % ≥ ${tier.dropPercent} %`]),
    ];
    if (missed.length === 0) return { label: tier.label, reasons };
    reasons = missed;
  }
  return { label: 'Poor', reasons };
}

/** Seconds of history the quality label looks at (stats arrive at 1 Hz). */
export const QUALITY_WINDOW = 10;

/**
 * The quality input from one peer's recent stats, oldest first (the last `QUALITY_WINDOW` are
 * used). Null until the peer has a round trip measurement. The drop % is over the window: the
 * growth of the glitch count (`glitches`) against the growth of the frames expected
 * (`framesExpected`); with a single sample, over the session.
 */
export function qualityInput(history: readonly PeerStats[]): QualityInput | null {
  const recent = history.slice(-QUALITY_WINDOW);
  const rtts = recent.flatMap((p) => (p.rttMs === null ? [] : [p.rttMs]));
  const last = recent.at(-1);
  if (!last || rtts.length === 0) return null;
  return {
    rttAvgMs: rtts.reduce((a, b) => a + b, 0) / rtts.length,
    rttMaxMs: Math.max(...rtts),
    bufferMs: last.fill.target * QUANTUM_MS,
    dropPercent: glitchPercent(recent),
  };
}

/**
 * Glitches a listener heard from one peer over `recent` stats (oldest first), % of the frames
 * expected: the growth of the glitch count against the growth of the frames expected; with a
 * single sample, over the session. 0 with none.
 */
export function glitchPercent(recent: readonly PeerStats[]): number {
  const first = recent[0];
  const last = recent.at(-1);
  if (!first || !last) return 0;
  const dropped = glitches(last) - glitches(first);
  const expected = framesExpected(last) - framesExpected(first);
  return recent.length > 1 && expected > 0 ? (100 * Math.max(0, dropped)) / expected : (100 * glitches(last)) / Math.max(1, framesExpected(last));
}

export interface OneWayInput {
  /**
   * Measured capture → playout of this peer's frames, ms (PeerStats.latencyMs.p50): from the
   * capture time the sender stamped on each frame (its microphone's, where it reads the track
   * itself) to the moment our playback takes it, over DataChannel, jitter buffer and playout.
   */
  pipelineMs: number;
  /**
   * Measured capture → our speaker, ms (PeerStats.oneWayMs.p50): the same frames dated at the
   * speaker by our output device's clock. Null where the page has no output-clock reading (no
   * `getOutputTimestamp`, or not yet).
   */
  speakerMs: number | null;
  /** AudioContext.outputLatency, seconds (0 when the browser does not report it): the fallback without `speakerMs`. */
  outputLatencyS: number;
  /** AudioContext.baseLatency, seconds: the fallback's second term. */
  baseLatencyS: number;
}

export interface OneWay {
  totalMs: number;
  /** The terms that add up to the total, ms. */
  pipelineMs: number;
  outputMs: number;
  /** Where the output term comes from: our output device's clock, or the AudioContext's latency attributes. */
  outputFrom: 'output clock' | 'reported latency';
}

/**
 * Mouth-to-ear delay from that peer to us. With the output clock: the measured capture → speaker
 * time itself, split into capture → playout and playout → speaker. Without it: capture → playout
 * plus outputLatency + baseLatency (the browser's own figure for render → speaker). Checked
 * against the real audio path by `npm run bench -- --m2e` (docs/BENCHMARKS.md).
 */
export function oneWayDelay(i: OneWayInput): OneWay {
  for (const [k, v] of Object.entries(i)) {
    if (k === 'speakerMs' && v === null) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new RangeError(`oneWayDelay: ${k} must be a finite number ≥ 0, got ${String(v)}`);
  }
  if (i.speakerMs !== null) return { totalMs: i.speakerMs, pipelineMs: i.pipelineMs, outputMs: i.speakerMs - i.pipelineMs, outputFrom: 'output clock' };
  const outputMs = (i.outputLatencyS + i.baseLatencyS) * 1000;
  return { totalMs: i.pipelineMs + outputMs, pipelineMs: i.pipelineMs, outputMs, outputFrom: 'reported latency' };
}

/** Seconds of stats whose median the one-way display shows: a glance, not one second's burst phase. */
export const ONE_WAY_SECONDS = 5;

/**
 * The one-way input from a peer's stats history: the medians of the last ONE_WAY_SECONDS seconds'
 * p50s (added latency, and capture → speaker where the output clock gave it), or null before any
 * latency figure. A second's p50 moves by ±5 ms with the render's burst phase and the sender's
 * delivery rhythm (docs/BENCHMARKS.md, m2e); their median does not.
 */
export function recentLatency(history: readonly PeerStats[]): { pipelineMs: number; speakerMs: number | null } | null {
  const recent = history.slice(-ONE_WAY_SECONDS);
  const pipes = recent.flatMap((p) => (p.latencyMs ? [p.latencyMs.p50] : []));
  if (pipes.length === 0) return null;
  const speakers = recent.flatMap((p) => (p.oneWayMs ? [p.oneWayMs.p50] : []));
  return { pipelineMs: median(pipes), speakerMs: speakers.length ? median(speakers) : null };
}

function fmt(x: number): string {
  return x.toFixed(1);
}
