// Launch helpers for the browser tests and the bench: one Chromium process per peer (Debian's
// /usr/bin/chromium, never a downloaded build), optionally fed a WAV file as its microphone, or
// headed on the audio rig with a real (PulseAudio) device.

import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page, type Worker } from '@playwright/test';
import type { Rig } from './audio-rig.ts';

export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

export const BASE_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--use-fake-ui-for-media-stream',
  '--use-fake-device-for-media-stream',
  '--autoplay-policy=no-user-gesture-required',
  // Keep timers and rendering of background peers running at full rate.
  '--disable-background-timer-throttling',
  '--disable-renderer-backgrounding',
  '--disable-backgrounding-occluded-windows',
];

export interface PeerBrowser {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** `executablePath` replaces Chromium with a wrapper (e.g. one that runs it inside a network namespace). */
export async function launchPeer(opts: { wav?: string; extraArgs?: string[]; omitArgs?: string[]; context?: BrowserContextOptions; viewport?: { width: number; height: number }; mobile?: boolean; executablePath?: string } = {}): Promise<PeerBrowser> {
  const args = [...BASE_ARGS.filter((a) => !opts.omitArgs?.includes(a)), ...(opts.wav ? [`--use-file-for-fake-audio-capture=${opts.wav}`] : []), ...(opts.extraArgs ?? [])];
  const browser = await chromium.launch({ executablePath: opts.executablePath ?? CHROMIUM, headless: true, args });
  const context = await browser.newContext({
    ...opts.context,
    ...(opts.viewport ? { viewport: opts.viewport } : {}),
    ...(opts.mobile ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
  });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error(`[page error] ${e.message}`));
  return { browser, context, page, close: () => browser.close() };
}

/**
 * A peer with an on-disk profile instead of an incognito context: Chromium refuses to install apps
 * from incognito (installability error "in-incognito"), so install checks need this. `dir` should
 * be a fresh temporary folder; it is removed by the caller.
 */
export async function launchPersistentPeer(dir: string, opts: { context?: BrowserContextOptions } = {}): Promise<{ context: BrowserContext; page: Page; close(): Promise<void> }> {
  const context = await chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, headless: true, args: BASE_ARGS, ...opts.context });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (e) => console.error(`[page error] ${e.message}`));
  return { context, page, close: () => context.close() };
}

/**
 * Three browsers in one room on a two-core machine: each picks two quanta per packet in its room
 * view, as a player on a computer that cannot keep up would. That machine carries three pages at
 * one quantum per packet only with thousands of glitches in 10 s, at two with a tenth of them
 * (`npx tsx bench/room-cpu.ts 3 10 3 [1|2]`, docs/BENCHMARKS.md "room-cpu"); the three-person
 * tests are about the room (lights, clock, metronome, takes), not the packet size.
 */
export const THREE_ON_TWO_CORES = { perPacket: 2 } as const;

/** Join a room through the UI as a person would (the room name typed in, or already in the link); `perPacket` 2: then pick two quanta per packet in the room view. */
export async function joinRoom(page: Page, baseUrl: string, room: string, name: string, opts: { channels?: 1 | 2; query?: string; password?: string; role?: 'Teacher' | 'Student' | 'Listener'; instrument?: string; perPacket?: 1 | 2 } = {}): Promise<void> {
  await page.goto(`${baseUrl}/?${opts.query ?? 'test=tap'}`);
  await page.getByRole('textbox', { name: 'Your name' }).fill(name);
  await page.getByRole('textbox', { name: 'Room' }).fill(room);
  if (opts.password !== undefined) await page.getByLabel('Password (optional)').fill(opts.password);
  if (opts.role) await page.getByRole('combobox', { name: 'Role' }).selectOption({ label: opts.role });
  if (opts.instrument) await page.getByRole('textbox', { name: 'Instrument' }).fill(opts.instrument);
  if (opts.channels === 1) await page.getByLabel('Mono').check();
  await page.getByRole('button', { name: 'Join' }).click();
  await page.getByRole('button', { name: 'Leave' }).waitFor({ timeout: 20_000 });
  if (opts.perPacket === 2) await page.locator('select[name=per-packet]').selectOption('2');
}

/** The page's network worker (named tutti-net), for reading its test tap directly. */
export async function netWorker(page: Page): Promise<Worker> {
  for (let i = 0; i < 100; i++) {
    for (const w of page.workers()) {
      if (w.url().includes('net.worker')) return w;
    }
    await page.waitForTimeout(100);
  }
  throw new Error('network worker not found');
}

/** The room's redundancy setting, through the page's control. */
export async function setRedundancy(page: Page, label: 'Off' | '1 frame'): Promise<void> {
  const select = page.getByRole('combobox', { name: /Redundancy/ });
  await select.selectOption((await select.locator('option', { hasText: new RegExp(`^${label}`) }).getAttribute('value'))!);
}

/**
 * A peer on the audio rig (tests/support/audio-rig.ts): headed on the rig's Xvfb display with the
 * rig's PulseAudio as its real audio device, since headless Chromium plays into no device. Which
 * output and input it uses is chosen per process through PULSE_SINK / PULSE_SOURCE (libpulse
 * applies them to Chromium's default device). The suite's flags, but a real microphone: no
 * --use-fake-device-for-media-stream (the fake UI still grants the permission).
 */
export async function launchOnRig(rig: Rig, devices: { sink: string; source: string }): Promise<PeerBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: false,
    args: BASE_ARGS.filter((a) => a !== '--use-fake-device-for-media-stream'),
    env: { ...rig.env(devices.sink, devices.source), DISPLAY: rig.display },
  });
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.on('pageerror', (e) => console.error(`[page error] ${e.message}`));
    return { browser, context, page, close: () => browser.close() };
  } catch (err) {
    await browser.close();
    throw err;
  }
}
