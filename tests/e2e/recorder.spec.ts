// Recording your input (issue 11): a take is written by the recorder worker into the Origin
// Private File System as a 24-bit WAV, fed from the network worker's capture through a shared ring.
// The microphone is a 24-bit WAV fed sample-exactly (exact-input.ts), so the downloaded take must
// be that file, sample for sample. A browser process killed mid-take leaves a take the next start
// recovers, with everything written up to the kill.

import { expect, test, type Page } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { joinRoom, launchPeer, launchPersistentPeer, type PeerBrowser } from '../support/browsers.ts';
import { feedExactInput } from '../support/exact-input.ts';
import { startServer, type RunningServer } from '../support/server.ts';
import { matchRecording, readWavPcm, recordingPcm } from '../support/wav-match.ts';
import { writeToneWav } from '../support/wav.ts';

const tmp = join(import.meta.dirname, '..', '.tmp');
let server: RunningServer;
let input = '';

test.beforeAll(async () => {
  mkdirSync(tmp, { recursive: true });
  input = writeToneWav(join(tmp, 'recorder-input24.wav'), { leftHz: 440, rightHz: 660, seconds: 5, bits: 24, noise: 0.01 });
  server = await startServer();
});
test.afterAll(async () => {
  await server?.close();
});

/** Seconds shown by the recording status (● m:ss · …). */
async function recordedSeconds(page: Page): Promise<number> {
  const text = (await page.getByTestId('recording-status').textContent()) ?? '';
  const m = /(\d+):(\d\d)/.exec(text);
  return m ? Number(m[1]) * 60 + Number(m[2]) : 0;
}

/** How long the first test records (TUTTI_TAKE_SECONDS, for a long take by hand; CI records 6 s). */
const TAKE_SECONDS = Number(process.env['TUTTI_TAKE_SECONDS'] ?? 6);

/** The recorder worker's time per second while recording, from its status (for the log). */
async function recorderBusy(page: Page): Promise<number | null> {
  return page.evaluate(() => (document.querySelector('tutti-app') as unknown as { recorder?: { status: { busyMsPerSecond: number } | null } }).recorder?.status?.busyMsPerSecond ?? null);
}

/** Download a take's input track through the UI; returns the file's bytes. */
async function downloadInput(page: Page, take: string): Promise<Buffer> {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.locator(`li[data-take="${take}"]`).getByRole('button', { name: /^Download input/ }).click()]);
  return readFileSync((await dl.path())!);
}

function judge(file: Buffer, label: string) {
  const rec = recordingPcm(file);
  const m = matchRecording(readWavPcm(input), rec.samples);
  console.log(`${label}: ${(m.frames / 48_000).toFixed(2)} s, ${JSON.stringify(m)}`);
  expect(rec.sampleRate).toBe(48_000);
  expect(m.leadingSilence, 'the take starts with the input, not seconds of silence').toBeLessThan(48_000 / 2);
  expect(m.misses, 'every frame after the first sound is a frame of the input, all 24 bits').toEqual([]);
  expect(m.verbatim).toBe(m.frames - m.leadingSilence);
  expect(m.jumps, 'one run: no frame lost or repeated').toBe(1);
  return m;
}

test('record your input: the downloaded take is the 24-bit input sample for sample; listed, then deleted', async () => {
  let peer: PeerBrowser | undefined;
  try {
    peer = await launchPeer();
    const page = peer.page;
    await feedExactInput(page, input);
    await joinRoom(page, server.url, 'rec-solo', 'Rita');
    await page.getByRole('button', { name: 'Record a take' }).click();
    await expect(page.getByTestId('recording-status')).toContainText('MB');
    const busy: number[] = [];
    await expect
      .poll(
        async () => {
          const b = await recorderBusy(page);
          if (b !== null) busy.push(b);
          return recordedSeconds(page);
        },
        { timeout: TAKE_SECONDS * 1000 + 15_000, intervals: [1000] },
      )
      .toBeGreaterThanOrEqual(TAKE_SECONDS);
    expect(await page.getByTestId('recording-status').textContent(), 'storage left is shown').toMatch(/free/);
    await page.getByRole('button', { name: 'Stop recording' }).click();
    const item = page.locator('li[data-take]');
    await expect(item).toHaveCount(1);
    await expect(item.getByRole('button', { name: /^Download input/ })).toBeVisible();
    const take = (await item.getAttribute('data-take'))!;
    expect(take).toMatch(/rec-solo$/);
    const t0 = Date.now();
    const file = await downloadInput(page, take);
    const downloadMs = Date.now() - t0;
    const m = judge(file, 'take');
    busy.sort((a, b) => a - b);
    console.log(`recorder worker: median ${busy[busy.length >> 1]} ms/s, max ${busy[busy.length - 1]} ms/s over ${busy.length} readings; ${(file.length / 1e6).toFixed(1)} MB written at ${((48_000 * 6) / 1000).toFixed(0)} kB/s; download ${downloadMs} ms`);
    expect(m.frames / 48_000).toBeGreaterThan(TAKE_SECONDS - 0.5);

    // The take outlives the room: after leaving, the join screen lists it.
    await page.getByRole('button', { name: 'Leave' }).click();
    await expect(page.locator(`li[data-take="${take}"]`)).toHaveCount(1);
    await page.locator(`li[data-take="${take}"]`).getByRole('button', { name: 'Delete take' }).click();
    await expect(page.locator('li[data-take]')).toHaveCount(0);
  } finally {
    await peer?.close();
  }
});

test('a browser killed mid-take: the next start recovers the take into a valid WAV with everything up to the kill', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tutti-rec-'));
  let second: Awaited<ReturnType<typeof launchPersistentPeer>> | undefined;
  try {
    const first = await launchPersistentPeer(dir);
    await feedExactInput(first.page, input);
    await joinRoom(first.page, server.url, 'rec-crash', 'Kim');
    await first.page.getByRole('button', { name: 'Record a take' }).click();
    await expect.poll(() => recordedSeconds(first.page), { timeout: 20_000 }).toBeGreaterThanOrEqual(4);
    const shown = await recordedSeconds(first.page);
    // Kill the browser process outright (SIGKILL: no unload, no flush, no goodbye).
    const pids = execFileSync('pgrep', ['-f', `user-data-dir=${dir}`], { encoding: 'utf8' }).trim().split('\n').map(Number);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone with its parent
      }
    }
    await first.context.close().catch(() => {});
    const killedAt = Date.now();

    second = await launchPersistentPeer(dir);
    await second.page.goto(server.url);
    await expect(second.page.getByTestId('recorder-notice')).toContainText('Recovered a take');
    const recoveredMs = Date.now() - killedAt;
    const item = second.page.locator('li[data-take]');
    await expect(item).toHaveCount(1);
    await expect(item).toContainText('recovered after the page closed');
    const take = (await item.getAttribute('data-take'))!;
    const m = judge(await downloadInput(second.page, take), `recovered take (status showed ${shown} s at the kill; relaunch to recovered in ${recoveredMs} ms)`);
    // Everything up to the kill: at least what the status showed, less the last checkpoint's second.
    expect(m.frames / 48_000).toBeGreaterThanOrEqual(shown - 1);
  } finally {
    await second?.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
});
