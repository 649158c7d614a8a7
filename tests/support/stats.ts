// Reading the network worker's stats as the page shows them (the <tutti-app> element's `stats`).

import { expect, type Page } from '@playwright/test';
import { QUANTUM_FRAMES, SAMPLE_RATE } from '../../src/shared/constants.ts';
import type { PeerStats, StatsMessage } from '../../src/shared/worker-protocol.ts';

export const FRAMES_PER_SECOND = SAMPLE_RATE / QUANTUM_FRAMES; // 375

export function stats(page: Page): Promise<StatsMessage | null> {
  return page.evaluate(() => (document.querySelector('tutti-app') as unknown as { stats: StatsMessage | null }).stats);
}

/**
 * The next stats the page receives (the worker posts them once a second), and when it received
 * them (page clock, ms). Two of these some seconds apart span whole worker intervals; two reads of
 * whatever the page holds may not (a late post on a loaded machine made two reads 2.5 s apart hold
 * stats 0.84 s apart).
 */
export function freshStats(page: Page): Promise<{ stats: StatsMessage; atMs: number }> {
  return page.evaluate(
    () =>
      new Promise<{ stats: StatsMessage; atMs: number }>((resolve, reject) => {
        const app = document.querySelector('tutti-app') as unknown as { stats: StatsMessage | null };
        const before = app.stats;
        const started = performance.now();
        const poll = setInterval(() => {
          if (app.stats && app.stats !== before) {
            clearInterval(poll);
            resolve({ stats: app.stats, atMs: performance.now() });
          } else if (performance.now() - started > 5_000) {
            clearInterval(poll);
            reject(new Error('no stats for 5 s'));
          }
        }, 10);
      }),
  );
}

/** Wait until the page receives from `count` peers at full rate. */
export async function waitForPeers(page: Page, count: number): Promise<StatsMessage> {
  let last: StatsMessage | null = null;
  await expect
    .poll(async () => {
      last = await stats(page);
      return (last?.peers ?? []).filter((p) => p.channelState === 'open' && p.framesPerSecond > FRAMES_PER_SECOND * 0.8).length;
    }, { timeout: 30_000, intervals: [250] })
    .toBe(count);
  return last!;
}

/** The page's only remote peer (two-party tests). */
export async function onlyPeer(page: Page): Promise<PeerStats> {
  const s = await stats(page);
  const p = s?.peers[0];
  if (!p || s.peers.length !== 1) throw new Error(`expected exactly one peer, got ${s?.peers.length ?? 'no stats'}`);
  return p;
}

/** Counter differences of one peer between two snapshots. */
export function delta(a: PeerStats, b: PeerStats): { expected: number; received: number; late: number; lost: number; missed: number; played: number; duplicates: number; rejected: number; recovered: number; concealed: number; underruns: number; resyncs: number } {
  const d = (k: 'received' | 'late' | 'lost' | 'missed' | 'played' | 'duplicates' | 'rejected' | 'recovered' | 'concealed' | 'underruns' | 'resyncs') => b[k] - a[k];
  return {
    expected: d('received') + d('recovered') + d('late') + d('lost'),
    received: d('received'),
    late: d('late'),
    lost: d('lost'),
    missed: d('missed'),
    played: d('played'),
    duplicates: d('duplicates'),
    rejected: d('rejected'),
    recovered: d('recovered'),
    concealed: d('concealed'),
    underruns: d('underruns'),
    resyncs: d('resyncs'),
  };
}
