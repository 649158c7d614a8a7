// The m2e sweep's 60 s tone without Tutti (bench only): through the sound server's own loop and
// through set-up A (the browser alone), each recorded from the speaker's sink and checked for
// dips and phase jumps as the sweep checks Tutti's (bench/m2e/tone.ts). Tells a dropout of the rig
// or of one browser from one in the two-browser chain.

import type { Rig } from '../../../tests/support/audio-rig.ts';
import { launchOnRig } from '../../../tests/support/browsers.ts';
import { serveBenchPages } from '../../lib/pages.ts';
import { measureTone } from '../measure.ts';
import { playAndRecord, sleep, startServerLoop, uploadSignal } from '../record.ts';
import { tone } from '../signals.ts';
import { TONE_HZ } from '../tone.ts';

const TONE_LEVEL = 0.5;
const TAIL_MS = 300;
const SETTLE_MS = 5000;

export async function toneFloor(rig: Rig, seconds: number, rounds: number, log: (s: string) => void): Promise<Record<string, unknown>[]> {
  const pages = await serveBenchPages();
  const rows: Record<string, unknown>[] = [];
  try {
    const signal = await uploadSignal(rig, 'tone-floor', tone(seconds, TONE_HZ, TONE_LEVEL), 1);
    const row = (path: string, round: number, g: ReturnType<typeof measureTone>) => {
      const at = g.events.map((e) => `${e.kind} ${e.atS.toFixed(2)}`).join(', ');
      log(`round ${round} ${path}: ${g.seconds.toFixed(1)} s, ${g.dips} dips, ${g.jumps} jumps${at ? ` (${at})` : ''}`);
      rows.push({ round, path, 'tone s': Math.round(g.seconds * 10) / 10, dips: g.dips, jumps: g.jumps });
    };
    for (let round = 1; round <= rounds; round++) {
      const stopLoop = await startServerLoop(rig);
      try {
        row('sound server loop', round, measureTone(await playAndRecord(rig, signal, 'micsink', TAIL_MS)));
      } finally {
        await stopLoop();
      }
      const b = await launchOnRig(rig, { sink: 'spk', source: 'mic' });
      try {
        await b.page.goto(`${pages.url}/m2e/index.html`);
        await b.page.evaluate(() => window.__m2eDirect());
        await sleep(SETTLE_MS);
        row('A (the browser alone)', round, measureTone(await playAndRecord(rig, signal, 'micsink', TAIL_MS)));
      } finally {
        await b.close();
      }
    }
  } finally {
    await pages.close();
  }
  return rows;
}
