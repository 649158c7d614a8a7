// Page-side history of the network worker's stats (main thread): a ring of the last stats
// messages with wall-clock timestamps, for the sparklines, the quality window and the JSON export.
// Stats arrive at 1 Hz, so the default 600 entries are the last ten minutes.

import type { PeerStats, StatsMessage } from '../shared/worker-protocol.ts';

export interface StatsSample {
  /** Wall-clock receive time, ms since the Unix epoch. */
  t: number;
  stats: StatsMessage;
}

/** The JSON export: what a download of the stats holds (docs/MEASUREMENT.md). */
export interface StatsExport {
  format: 'tutti-stats/1';
  exportedAt: string;
  /** Output-device latency terms the page knows, ms (AudioContext.outputLatency / baseLatency). */
  device: { outputLatencyMs: number; baseLatencyMs: number };
  samples: StatsSample[];
}

export class StatsRecorder {
  private readonly ring: (StatsSample | undefined)[];
  private next = 0;
  private count = 0;
  private readonly listeners = new Set<() => void>();

  constructor(readonly capacity = 600) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`StatsRecorder capacity must be a positive integer, got ${capacity}`);
    this.ring = new Array<StatsSample | undefined>(capacity);
  }

  push(stats: StatsMessage, t = Date.now()): void {
    this.ring[this.next] = { t, stats };
    this.next = (this.next + 1) % this.capacity;
    this.count = Math.min(this.count + 1, this.capacity);
    for (const fn of this.listeners) fn();
  }

  /** Called after every push; returns the unsubscribe function. */
  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The last `n` samples (all by default), oldest first. */
  samples(n = this.count): StatsSample[] {
    const k = Math.min(Math.max(0, n), this.count);
    const out: StatsSample[] = [];
    for (let i = k; i > 0; i--) out.push(this.ring[(this.next - i + this.capacity) % this.capacity]!);
    return out;
  }

  latest(): StatsMessage | null {
    return this.count ? this.ring[(this.next - 1 + this.capacity) % this.capacity]!.stats : null;
  }

  /** One peer's stats over the last `n` samples, oldest first; samples where it was absent are skipped. */
  peerHistory(peerId: string, n = this.count): PeerStats[] {
    return this.samples(n).flatMap((s) => s.stats.peers.filter((p) => p.peerId === peerId));
  }

  export(device: StatsExport['device'], n = this.count, now = new Date()): StatsExport {
    return { format: 'tutti-stats/1', exportedAt: now.toISOString(), device, samples: this.samples(n) };
  }

  clear(): void {
    this.ring.fill(undefined);
    this.next = this.count = 0;
  }
}
