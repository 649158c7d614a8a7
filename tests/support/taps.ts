// Reading a test-build page's network-worker tap (workers/test-tap.ts) from Playwright, in the worker
// itself (worker.evaluate), never through the page. Only the test build has a tap.

import type { Page } from '@playwright/test';
import { netWorker } from './browsers.ts';
import type { PcmQuanta } from './wav-match.ts';
import type { ClockCheck } from '../../workers/clock-sync.ts';

/** The decoded PCM of the last seconds, per remote peer id, and the sequences this page sent. */
export interface PcmSnapshot {
  received: Record<string, PcmQuanta>;
  sentSeqs: number[];
}

export async function readPcm(page: Page): Promise<PcmSnapshot> {
  const w = await netWorker(page);
  return w.evaluate(() => {
    const t = (self as unknown as { __tuttiTap?: import('../../workers/test-tap.ts').Tap }).__tuttiTap;
    if (!t) throw new Error('no __tuttiTap: not the test build, or opened without ?test=tap');
    const received: Record<string, { seqs: number[]; pcm: number[] }> = {};
    for (const [id, log] of t.pcm) received[id] = log.toJSON();
    return { received, sentSeqs: t.sent.toJSON().seqs };
  });
}

/** What the page's network worker has on its global: the test build's debug hooks, or nothing. */
export async function workerGlobals(page: Page): Promise<{ tap: boolean; worker: boolean }> {
  const w = await netWorker(page);
  return w.evaluate(() => {
    const g = self as unknown as Record<string, unknown>;
    return { tap: g['__tuttiTap'] !== undefined, worker: g['__tuttiWorker'] !== undefined };
  });
}

/**
 * Test build only: from now on the page's sender drops every `n`th frame before it reaches any
 * channel (0 stops), as `?dropEvery=n` does from the start: a link that degrades mid-session.
 * Sets the worker's own test options (workers/sender.ts reads them per frame).
 */
export async function setDropEvery(page: Page, n: number): Promise<void> {
  const w = await netWorker(page);
  await w.evaluate((every) => {
    const nw = (self as unknown as { __tuttiWorker?: { sender: { test: { dropEvery?: number } } } }).__tuttiWorker;
    if (!nw) throw new Error('no __tuttiWorker: not the test build');
    if (every >= 2) nw.sender.test.dropEvery = every;
    else delete nw.sender.test.dropEvery;
  }, n);
}

/**
 * The test build's shared-clock check (workers/net.worker.ts clockCheck): the shared clock and the
 * worker's own (possibly skewed) clock, each minus the machine's clock, ms.
 */
export async function clockCheck(page: Page): Promise<ClockCheck> {
  const w = await netWorker(page);
  return w.evaluate(() => {
    const nw = (self as unknown as { __tuttiWorker?: { clockCheck(): ClockCheck | null } }).__tuttiWorker;
    if (!nw) throw new Error('no __tuttiWorker: not the test build');
    const c = nw.clockCheck();
    if (!c) throw new Error('clockCheck: not the test build');
    return c;
  });
}
