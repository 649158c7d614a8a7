// One Chromium process on the rig (Node, Playwright): headed on the rig's Xvfb display, with the
// rig's PulseAudio as its real audio device. Which output and input it uses is chosen per process
// through PULSE_SINK / PULSE_SOURCE (libpulse applies them to Chromium's default device).

import { chromium } from '@playwright/test';
import { BASE_ARGS, CHROMIUM, type PeerBrowser } from '../../tests/support/browsers.ts';
import type { Rig } from './rig.ts';

/**
 * The browser tests' flags, but a real microphone: no --use-fake-device-for-media-stream (the
 * fake UI still grants the permission), and no headless mode, which plays into no device.
 */
const ARGS = BASE_ARGS.filter((a) => a !== '--use-fake-device-for-media-stream');

export async function launchOnRig(rig: Rig, devices: { sink: string; source: string }): Promise<PeerBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: false,
    args: ARGS,
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
