// The m2e sweep's 60 s tone without Tutti (bench only): through the sound server's own loop and
// through set-up A (the browser alone), each recorded from the speaker's sink and checked for
// dips and phase jumps as the sweep checks Tutti's (bench/m2e/tone.ts). Tells a dropout of the rig
// or of one browser from one in the two-browser chain. The third path is A again while a Tutti pair
// carries the same tone beside it (its receiver plays into the `silent` sink, so the recording
// holds A's copy only): the machine as loaded as in the sweep, with no Tutti code in what is
// recorded. If A's copy dips there as Tutti's receiver does, the dropouts are the machine's; if
// it stays clean while the receiver's speaker drops out, they are Tutti's.

import type { Rig } from '../../../tests/support/audio-rig.ts';
import { launchOnRig } from '../../../tests/support/browsers.ts';
import { startServer } from '../../../tests/support/server.ts';
import { serveBenchPages } from '../../lib/pages.ts';
import { measureTone } from '../measure.ts';
import { playAndRecord, sleep, startServerLoop, uploadSignal } from '../record.ts';
import { tone } from '../signals.ts';
import { TONE_HZ } from '../tone.ts';
import { appFiguresDuring, joinPair } from '../tutti-pair.ts';

const TONE_LEVEL = 0.5;
const TAIL_MS = 300;
const SETTLE_MS = 5000;

export async function toneFloor(rig: Rig, seconds: number, rounds: number, log: (s: string) => void): Promise<Record<string, unknown>[]> {
  const pages = await serveBenchPages();
  const server = await startServer();
  const rows: Record<string, unknown>[] = [];
  try {
    const signal = await uploadSignal(rig, 'tone-floor', tone(seconds, TONE_HZ, TONE_LEVEL), 1);
    const row = (path: string, round: number, g: ReturnType<typeof measureTone>, extra: Record<string, unknown> = {}) => {
      const at = g.events.map((e) => `${e.kind} ${e.atS.toFixed(2)}`).join(', ');
      log(`round ${round} ${path}: ${g.seconds.toFixed(1)} s, ${g.dips} dips, ${g.jumps} jumps${at ? ` (${at})` : ''}${Object.keys(extra).length ? ` ${JSON.stringify(extra)}` : ''}`);
      rows.push({ round, path, 'tone s': Math.round(g.seconds * 10) / 10, dips: g.dips, jumps: g.jumps, ...extra });
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
      const pair = await joinPair(rig, server.url, `tone-floor-${process.pid}-${round}`, '', { sink: 'silent', source: 'silent.monitor' });
      try {
        const beside = await launchOnRig(rig, { sink: 'spk', source: 'mic' });
        try {
          await beside.page.goto(`${pages.url}/m2e/index.html`);
          await beside.page.evaluate(() => window.__m2eDirect());
          await sleep(SETTLE_MS);
          const { result, app } = await appFiguresDuring(pair, () => playAndRecord(rig, signal, 'micsink', TAIL_MS));
          row('A beside a Tutti pair', round, measureTone(result), { 'Tutti receiver: underruns': app.underruns, trimmed: app.trimmed, 'speaker dropouts': app.speakerDropouts });
        } finally {
          await beside.close();
        }
      } finally {
        await pair.close();
      }
    }
  } finally {
    await server.close();
    await pages.close();
  }
  return rows;
}
