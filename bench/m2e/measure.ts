// From a rig recording to the figures of one measurement (Node, pure): the click train's gaps with
// their spread, glitches and drift within the recording, or a tone's glitches.

import { playOf, type TimedRecording } from './dating.ts';
import { CHANNELS, RATE } from './signals.ts';
import { detectOnsets, frameMagnitude, pairAcross, pairClicks, peakOf, type Pairing } from './onsets.ts';
import { spread } from './spread.ts';
import { TONE_HZ, toneGlitches, type ToneGlitches } from './tone.ts';

export interface ClickMeasurement {
  /** Onset gap per click, ms (null: no copy), in playing order. */
  gapsMs: (number | null)[];
  /** When each click's copy played at the speaker, wall clock ms (null: no copy, or a recording not dated on the wall clock). */
  heardAtMs: (number | null)[];
  medianMs: number | null;
  minMs: number | null;
  maxMs: number | null;
  p10Ms: number | null;
  p90Ms: number | null;
  missing: number;
  doubled: number;
  /** Onsets outside every click's window. */
  strays: number;
  /** Clicks played but not found in the recording (a rig failure, not the browser's). */
  directMissing: number;
  /**
   * Least-squares slope of the gap over the recording, ms per second: a path whose delay creeps
   * (a rate mismatch, a queue that fills) shows here, and a single step (a trim, an underrun) too.
   */
  slopeMsPerS: number | null;
  /** The rig devices' clock rates against the wall clock over the recording, ppm: the microphone's sink and the speaker (null without the mouth's recording). */
  mouthRatePpm: number | null;
  speakerRatePpm: number | null;
  /** How tight the wall-clock dating is: the larger of the two recordings' chunk-delay p90, ms. */
  datingP90Ms: number | null;
  /** The sinks' configured latencies during the recording (their clocks run this far behind their monitors), ms; null where not read or changed. */
  mouthSinkLatencyMs: number | null;
  speakerSinkLatencyMs: number | null;
}

/** The two ends' recordings (bench/m2e/record.ts ClickRecording). */
export interface ClickEnds {
  speaker: TimedRecording;
  mouth: TimedRecording;
}

/**
 * The click train's gaps. From the speaker's recording alone (`rec` samples, the train played into
 * both sinks): each from the direct click to its copy in that recording. From both ends (the train
 * played into the microphone's sink only, bench/m2e/record.ts recordClicks): each from the click
 * playing at the microphone's sink to its copy playing at the speaker's, both on their devices'
 * clocks. A copy must reach a quarter of the click's level at the mouth to count, as a copy in the
 * same recording had to reach a quarter of the direct click's.
 */
export function measureClicks(rec: Int16Array | ClickEnds, clicks: number, periodS: number): ClickMeasurement {
  let p: Omit<Pairing, 'direct'>;
  let heardAtMs: (number | null)[] = [];
  if (rec instanceof Int16Array) {
    p = pairClicks(detectOnsets(frameMagnitude(rec, CHANNELS), RATE), RATE, { expectedClicks: clicks, periodS });
  } else {
    const mouthMag = frameMagnitude(rec.mouth.samples, CHANNELS);
    const mouth = detectOnsets(mouthMag, RATE).map((f) => playOf(rec.mouth, f));
    const speaker = detectOnsets(frameMagnitude(rec.speaker.samples, CHANNELS), RATE, { level: 0.25 * peakOf(mouthMag) }).map((f) => playOf(rec.speaker, f));
    // Each on its own recording, a copy is not another onset of the same recording that must be
    // told from the click: from −2 ms (the dating's error) on. The rig's own loop plays ~0–5 ms.
    const across = pairAcross(mouth, speaker, { expectedClicks: clicks, periodS, minGapMs: -2 });
    heardAtMs = across.gapsMs.map((g, k) => (g === null ? null : Math.round((across.directMs[k]! + g) * 10) / 10));
    p = across;
  }
  const s = spread(p.gapsMs);
  const r2 = (x: number | null | undefined) => (x === null || x === undefined ? null : Math.round(x * 100) / 100);
  const ends = rec instanceof Int16Array ? null : rec;
  return {
    gapsMs: p.gapsMs.map(r2),
    heardAtMs: rec instanceof Int16Array ? p.gapsMs.map(() => null) : heardAtMs,
    medianMs: r2(s?.median),
    minMs: r2(s?.min),
    maxMs: r2(s?.max),
    p10Ms: r2(s?.p10),
    p90Ms: r2(s?.p90),
    missing: p.missing,
    doubled: p.doubled,
    strays: p.strays,
    directMissing: p.directMissing,
    slopeMsPerS: r2(slope(p.gapsMs, periodS)),
    mouthRatePpm: ends ? r2(ends.mouth.ratePpm) : null,
    speakerRatePpm: ends ? r2(ends.speaker.ratePpm) : null,
    datingP90Ms: ends ? r2(Math.max(ends.mouth.chunkDelayP90Ms, ends.speaker.chunkDelayP90Ms)) : null,
    mouthSinkLatencyMs: ends?.mouth.sinkLatencyMs ?? null,
    speakerSinkLatencyMs: ends?.speaker.sinkLatencyMs ?? null,
  };
}

function slope(gaps: readonly (number | null)[], periodS: number): number | null {
  const pts = gaps.flatMap((g, k) => (g === null ? [] : [[k * periodS, g] as const]));
  if (pts.length < 3) return null;
  const mx = pts.reduce((a, [x]) => a + x, 0) / pts.length;
  const my = pts.reduce((a, [, y]) => a + y, 0) / pts.length;
  let num = 0;
  let den = 0;
  for (const [x, y] of pts) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return num / den;
}

/** The tone's glitches in the recording's left channel (the rig plays the same on both). */
export function measureTone(rec: Int16Array): ToneGlitches {
  const left = new Float32Array(rec.length / CHANNELS);
  for (let f = 0; f < left.length; f++) left[f] = rec[f * CHANNELS]! / 32768;
  return toneGlitches(left, RATE, TONE_HZ);
}
