// Page: this participant's quality summary for the room (MemberState.quality, issue 12 "everyone's
// connection at a glance"): for each peer they hear, the glitches over the quality window and the
// round trip and the one-way delay, from the engine's per-peer stats history; their input's peak and clipping, from the
// input meter; and the depth in use. Pure functions; the session publishes the result at once
// when a light would change (and, as the leader of a leader-mode metronome, when a one-way delay
// moved: advanceMoved) and every 5 s otherwise, and every member's view pairs the two ends of each
// link (src/ui/connection-lights.ts).

import { AMBER_PERCENT, RED_PERCENT } from '../ui/connection-lights.ts';
import { QUALITY_WINDOW, glitchPercent, qualityInput } from '../ui/quality.ts';
import type { QualitySummary } from '../shared/signaling-protocol.ts';
import type { PeerStats } from '../shared/worker-protocol.ts';

/**
 * A one-way delay that moved this much (ms) since it was published is published again at once by
 * a leader-mode metronome's leader: each member's clicks are advanced by it, and a change of the
 * leader's playout (a depth change, a stall) moves every member's strikes by as much until then.
 */
export const ADVANCE_REPUBLISH_MS = 0.5;

/** Seconds the input's clipping stays reported after the last sample at full scale. */
export const CLIP_HOLD_SECONDS = 10;

/** Peak (0..1+, linear) as dBFS, one decimal; −99 for silence. */
export function peakDb(peak: number): number {
  return peak > 1e-5 ? Math.round(200 * Math.log10(peak)) / 10 : -99;
}

/**
 * The summary from each heard peer's recent stats (oldest first; the last QUALITY_WINDOW are
 * judged, as the quality label does), the input's peak over the last second, whether it clipped
 * within CLIP_HOLD_SECONDS, and the depth in use. A peer with no stats yet is left out.
 */
export function qualitySummary(peers: ReadonlyMap<string, readonly PeerStats[]>, inputPeak: number, clipping: boolean, depth: number): QualitySummary {
  const heard: QualitySummary['heard'] = {};
  for (const [id, history] of peers) {
    const recent = history.slice(-QUALITY_WINDOW);
    if (recent.length === 0) continue;
    const q = qualityInput(recent);
    // The newest second's: it follows a change of our playout within a second (a median over the
    // window lagged one by 5–10 s, and a leader-mode member's strikes landed that far off meanwhile).
    // Each second's figure is already a median of some 375 frames, each dated at our speaker.
    const latest = recent.findLast((s) => s.oneWayMs)?.oneWayMs ?? null;
    const oneWay = latest ? latest.p50 : null;
    heard[id] = { glitchPercent: Math.round(glitchPercent(recent) * 100) / 100, rttMs: q ? Math.round(q.rttAvgMs * 10) / 10 : null, ...(oneWay === null ? {} : { oneWayMs: Math.round(oneWay * 10) / 10 }) };
  }
  return { heard, inputDb: peakDb(inputPeak), clipping, depth };
}

/**
 * What a view's lights and notes turn on: each direction's light class, the clipping flag, the
 * depth, and which peers are reported. Two summaries with the same key draw the same lights.
 */
export function lightKey(q: QualitySummary): string {
  const cls = (p: number): number => (p >= RED_PERCENT ? 2 : p >= AMBER_PERCENT ? 1 : 0);
  return JSON.stringify([Object.entries(q.heard).map(([id, h]) => [id, cls(h.glitchPercent)]).sort(), q.clipping, q.depth]);
}

/** Whether any peer's one-way delay in `q` moved by ADVANCE_REPUBLISH_MS or more from `published` (or appeared). */
export function advanceMoved(q: QualitySummary, published: QualitySummary): boolean {
  for (const [id, h] of Object.entries(q.heard)) {
    if (h.oneWayMs === undefined) continue;
    const was = published.heard[id]?.oneWayMs;
    if (was === undefined || Math.abs(h.oneWayMs - was) >= ADVANCE_REPUBLISH_MS) return true;
  }
  return false;
}
