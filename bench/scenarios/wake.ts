// Wake scenario (Node side): how the network worker learns of a captured quantum, three
// mechanisms side by side in one page (bench/wake).

import { launchPeer } from '../../tests/support/browsers.ts';
import type { WakeResult } from '../wake/wake-protocol.ts';
import { serveBenchPages } from '../lib/pages.ts';

export async function runWake(seconds: number): Promise<WakeResult[]> {
  const pages = await serveBenchPages();
  const peer = await launchPeer();
  try {
    await peer.page.goto(`${pages.url}/wake/index.html`);
    return await peer.page.evaluate((s) => window.__wakeBench(s), seconds);
  } finally {
    await peer.close();
    await pages.close();
  }
}
