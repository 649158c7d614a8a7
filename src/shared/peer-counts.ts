// Sums over one peer's counters as the network worker reports them (PeerStats), used wherever
// those counters are judged: the quality label (src/ui/quality.ts), Check my setup
// (src/engine/setup-check.ts). Pure functions, no thread of their own.

import type { PeerStats } from './worker-protocol.ts';

/** Everything a listener hears as a glitch, counted in quanta: late, lost, underrun, trimmed. */
export function glitches(p: Pick<PeerStats, 'late' | 'lost' | 'underruns' | 'trimmed'>): number {
  return p.late + p.lost + p.underruns + p.trimmed;
}

/** Frames expected from a peer so far, the worker's denominator for `percent`: received + recovered + late + lost. */
export function framesExpected(p: Pick<PeerStats, 'received' | 'recovered' | 'late' | 'lost'>): number {
  return p.received + p.recovered + p.late + p.lost;
}
