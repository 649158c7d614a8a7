// Measurement UI in real Chromium: the pre-join check runs the whole audio chain through an
// in-page loopback; a two-browser session shows the per-peer panel (fields, quality label,
// sparklines), measures a peer round trip, exports stats as JSON and the arrival trace as CSV.

import { expect, test, type Download, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { QUANTUM_MS } from '../../src/shared/constants.ts';
import type { StatsExport } from '../../src/engine/stats-recorder.ts';
import { TRACE_CSV_HEADER } from '../../src/engine/trace-csv.ts';
import { joinRoom } from '../support/browsers.ts';
import { roomSuite } from '../support/suite.ts';

const suite = roomSuite('measure');
const { wav, launch } = suite;

async function downloadText(page: Page, click: () => Promise<void>): Promise<{ name: string; text: string }> {
  const [dl] = (await Promise.all([page.waitForEvent('download', { timeout: 15_000 }), click()])) as [Download, void];
  return { name: dl.suggestedFilename(), text: readFileSync((await dl.path())!, 'utf8') };
}

test('pre-join check: the whole chain through an in-page loopback at full frame rate, then joining works', async () => {
  const a = await launch({ wav: wav.a });
  const page = a.page;
  await page.goto(`${suite.server.url}/`);
  await page.getByRole('button', { name: 'Check my setup' }).click();
  const result = page.getByTestId('check-result');
  await expect(result.or(page.getByTestId('check-error'))).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('check-error')).toHaveCount(0);
  const fpsText = await page.getByTestId('check-fps').textContent();
  const fps = Number(/(\d+) frames\/s/.exec(fpsText ?? '')?.[1]);
  console.log(`setup check: ${(await result.innerText()).replace(/\n/g, ' | ')}`);
  expect(fps, 'frames/s through the loopback (375 = every quantum)').toBeGreaterThan(300);
  expect(fps).toBeLessThan(400);
  await expect(page.getByTestId('check-latency')).toHaveText(/p50 \d+\.\d ms · p99 \d+\.\d ms/);
  await expect(page.getByTestId('check-late')).toHaveText(/^\d+\.\d\d %$/);
  await expect(page.getByTestId('check-lost')).toHaveText(/^\d+\.\d\d %$/);
  await expect(page.getByTestId('check-signaling')).toHaveText(/\d+\.\d ms round trip \(median of 5\)/);

  // The check stopped its engine: joining afterwards starts a fresh one that sends at full rate.
  // (Same page, no reload.)
  await page.getByRole('textbox', { name: 'Your name' }).fill('Solo');
  await page.getByRole('textbox', { name: 'Room' }).fill('after-check');
  await page.getByRole('button', { name: 'Join' }).click();
  await page.getByRole('button', { name: 'Leave' }).waitFor({ timeout: 20_000 });
  await expect
    .poll(() => page.evaluate(() => (document.querySelector('tutti-app') as unknown as { stats: { sendFramesPerSecond: number } | null }).stats?.sendFramesPerSecond ?? 0), { timeout: 15_000 })
    .toBeGreaterThan(300);
});

test('two browsers: stats panel with quality label and sparklines, peer round trip, stats JSON and arrival-trace CSV', async () => {
  const a = await launch({ wav: wav.a });
  const b = await launch({ wav: wav.b });
  await joinRoom(a.page, suite.server.url, 'measure', 'Alice', { query: '' });
  await joinRoom(b.page, suite.server.url, 'measure', 'Bob', { query: '' });
  const page = a.page;
  const panel = page.locator('tutti-peer-stats');
  await expect(panel).toHaveCount(1, { timeout: 30_000 });

  // Quality label once a round trip is known.
  await expect(panel.getByTestId('quality')).toHaveAttribute('data-quality', /^(Excellent|Good|Fair|Poor)$/, { timeout: 30_000 });
  // The figure shows once our output has played 12 s (OUTPUT_CLOCK_SETTLE_S); before, "–" and why.
  const oneWay = panel.getByTestId('one-way');
  if ((await page.evaluate(() => (document.querySelector('tutti-app') as unknown as { session: { engine: { context: AudioContext } } }).session.engine.context.currentTime)) < 8) {
    await expect(oneWay).toHaveText(/One-way ≈ –/);
    await expect(oneWay).toHaveAttribute('title', /timing our output device/);
    console.log('one-way: "–" while our output had played under 8 s');
  }
  await expect(oneWay).toHaveText(/One-way ≈ \d+\.\d ms/, { timeout: 30_000 });

  // Every field of the panel.
  await panel.getByText('Connection details').click();
  const stat = (k: string) => panel.locator(`dd[data-stat="${k}"]`);
  await expect(stat('Buffer fill')).toHaveText(/avg \d+\.\d · min -?\d+\.\d · target \d+ quanta/);
  await expect(stat('Received')).toHaveText(/^[1-9]\d* \(\d+ frames\/s\)$/);
  for (const k of ['Late', 'Lost', 'Duplicates', 'Rejected']) await expect(stat(k)).toHaveText(/^\d+ \(\d+\.\d\d %\)/);
  await expect(stat('RTT')).toHaveText(/^\d+\.\d ms$/);
  await expect(stat('IFDV')).toHaveText(/p50 \d+\.\d\d · p95 \d+\.\d\d · max \d+\.\d\d ms/, { timeout: 10_000 });
  await expect(stat('Bitrate in')).toHaveText(/^[1-9]\d* kbit\/s · 16-bit$/);
  await expect(stat('Bitrate out')).toHaveText(/^[1-9]\d* kbit\/s$/);
  await expect(stat('Send backlog')).toHaveText(/^\d+ B$/);
  await expect(stat('Concealed')).toHaveText(/^\d+ quanta$/);
  await expect(stat('Recovered')).toHaveText(/^\d+ frames$/);
  await expect(stat('Added latency')).toHaveText(/p50 \d+\.\d ms · p99 \d+\.\d ms/);

  // Sparklines draw one point per stats second.
  const points = (id: string) => panel.getByTestId(id).locator('polyline').evaluateAll((ls) => ls.reduce((n, l) => n + (l.getAttribute('points') ?? '').trim().split(/\s+/).filter(Boolean).length, 0));
  await expect.poll(() => points('spark-fill'), { timeout: 15_000 }).toBeGreaterThanOrEqual(4);
  await expect.poll(() => points('spark-ifdv'), { timeout: 15_000 }).toBeGreaterThanOrEqual(3);

  // Peer loopback: Bob's worker echoes Alice's stream; the round trip shows with its one-way half.
  await panel.getByRole('button', { name: 'Measure round trip' }).click();
  await expect(panel.getByTestId('loopback')).toHaveText(/round trip (\d+\.\d) ms · one-way ≈ \d+\.\d ms/, { timeout: 20_000 });
  const rt = /round trip (\d+\.\d) ms · one-way ≈ (\d+\.\d) ms/.exec((await panel.getByTestId('loopback').textContent())!)!;
  console.log(`peer loopback: ${rt[0]}`);
  expect(Math.abs(Number(rt[1]) / 2 - Number(rt[2]))).toBeLessThanOrEqual(0.1);
  await panel.getByRole('button', { name: 'Measure round trip' }).click();

  // Stats as JSON: the recent stats messages with increasing timestamps.
  const json = await downloadText(page, () => page.getByRole('button', { name: 'Export stats (JSON)' }).click());
  expect(json.name).toMatch(/^tutti-stats-.*\.json$/);
  const exp = JSON.parse(json.text) as StatsExport;
  expect(exp.format).toBe('tutti-stats/1');
  expect(exp.samples.length).toBeGreaterThanOrEqual(5);
  for (let i = 1; i < exp.samples.length; i++) expect(exp.samples[i]!.t).toBeGreaterThan(exp.samples[i - 1]!.t);
  const last = exp.samples.at(-1)!.stats;
  expect(last.type).toBe('stats');
  expect(last.peers).toHaveLength(1);
  expect(last.peers[0]!.received).toBeGreaterThan(0);
  expect(last.peers[0]!.fill.target).toBeGreaterThan(0);

  // Arrival trace: record ~3 s, download as CSV, rows in arrival order, capture times one quantum per sequence.
  await page.getByRole('button', { name: 'Record arrival trace' }).click();
  await expect.poll(async () => Number(/(\d+) frames traced/.exec((await page.getByTestId('trace-frames').textContent()) ?? '')?.[1] ?? 0), { timeout: 15_000 }).toBeGreaterThan(1000);
  await page.getByRole('button', { name: 'Record arrival trace' }).click(); // stop
  const csv = await downloadText(page, () => page.getByRole('button', { name: 'Download trace' }).click());
  expect(csv.name).toMatch(/^tutti-trace-.*\.csv$/);
  const lines = csv.text.trim().split('\n');
  expect(lines[0]).toBe(TRACE_CSV_HEADER);
  const rows = lines.slice(1).map((l) => l.split(','));
  expect(rows.length).toBeGreaterThan(1000);
  const peerIds = new Set(rows.map((r) => r[0]));
  expect(peerIds.size).toBe(1);
  const arrival = rows.map((r) => Number(r[2]));
  const seq = rows.map((r) => Number(r[1]));
  const capture = rows.map((r) => Number(r[3]));
  for (const x of [...arrival, ...seq, ...capture]) expect(Number.isFinite(x)).toBe(true);
  let backwards = 0;
  for (let i = 1; i < arrival.length; i++) if (arrival[i]! < arrival[i - 1]!) backwards++;
  expect(backwards, 'rows out of arrival order').toBe(0);
  // Capture timestamps advance one quantum per sequence number across the trace (±3 %), from the
  // first arrival to the last. Sequences wrap at 2^32; capture_ms is a 32-bit µs clock, so it
  // wraps every 2^32 µs.
  const end = rows.length - 1;
  const dSeq = (seq[end]! - seq[0]!) | 0;
  const dCapture = (capture[end]! - capture[0]! + 2 ** 32 / 1000) % (2 ** 32 / 1000);
  const msPerSeq = dCapture / dSeq;
  console.log(`trace: ${rows.length} rows over ${((arrival.at(-1)! - arrival[0]!) / 1000).toFixed(1)} s, ${msPerSeq.toFixed(4)} ms of capture time per sequence`);
  expect(Math.abs(msPerSeq - QUANTUM_MS) / QUANTUM_MS).toBeLessThan(0.03);
});
