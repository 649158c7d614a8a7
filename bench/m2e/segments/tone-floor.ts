// The m2e sweep's 60 s tone without Tutti (bench only): through the sound server's own loop,
// through set-up A (the browser alone) and through B2 (two worklets and a FIFO in two contexts, the
// floor of any worklet chain such as Tutti's), each recorded from the speaker's sink and checked
// for dips and phase jumps as the sweep checks Tutti's (bench/m2e/tone.ts). Tells a dropout of the
// rig or of one browser from one in the two-browser chain. Then A and B2 again while a Tutti pair
// carries the same tone beside them (its receiver plays into the `silent` sink, so the recording
// holds the reference's copy only): the machine as loaded as in the sweep, with no Tutti code in
// what is recorded. If the reference's copy dips there as Tutti's receiver does, the dropouts are
// the machine's; if it stays clean while the receiver's speaker drops out, they are Tutti's. Each
// reference page counts its own speaker dropouts too (playbackStats, as Tutti's receiver does), so
// the renders' missed deadlines under one load sit side by side.

import type { Rig } from '../../../tests/support/audio-rig.ts';
import { launchOnRig } from '../../../tests/support/browsers.ts';
import { startServer } from '../../../tests/support/server.ts';
import { serveBenchPages } from '../../lib/pages.ts';
import { B_PREFILL } from '../../scenarios/m2e.ts';
import { measureTone } from '../measure.ts';
import { playAndRecord, sleep, startServerLoop, uploadSignal } from '../record.ts';
import { tone } from '../signals.ts';
import { TONE_HZ } from '../tone.ts';
import { appFiguresDuring, joinPair, type TuttiPair } from '../tutti-pair.ts';

const TONE_LEVEL = 0.5;
const TAIL_MS = 300;
const SETTLE_MS = 5000;

type Dropouts = { events: number; ms: number } | null;

/** Dropouts between two readings of one page, or null where the browser does not count them. */
function dropoutsBetween(a: Dropouts, b: Dropouts): number | null {
  return a && b ? b.events - a.events : null;
}

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
      // A reference page plays the tone from `mic` to `spk`: A (Web Audio straight through) or B2
      // (two worklets and a FIFO in two contexts, the floor of any worklet chain such as Tutti's).
      const reference = async (path: 'A' | 'B2', label: string, beside: TuttiPair | null) => {
        const b = await launchOnRig(rig, { sink: 'spk', source: 'mic' });
        try {
          await b.page.goto(`${pages.url}/m2e/index.html`);
          if (path === 'A') await b.page.evaluate(() => window.__m2eDirect());
          else await b.page.evaluate((prefill) => window.__m2eWorklets(2, prefill), B_PREFILL);
          await sleep(SETTLE_MS);
          if (path === 'B2') await b.page.evaluate(() => window.__m2eFifoReset());
          const before = await b.page.evaluate(() => window.__m2eSpeakerDropouts());
          const record = () => playAndRecord(rig, signal, 'micsink', TAIL_MS);
          const { result, app } = beside ? await appFiguresDuring(beside, record) : { result: await record(), app: null };
          const after = await b.page.evaluate(() => window.__m2eSpeakerDropouts());
          const fifo = path === 'B2' ? await b.page.evaluate(() => window.__m2eFifoCounters()) : null;
          row(`${path} ${label}`, round, measureTone(result), {
            [`${path}: speaker dropouts`]: dropoutsBetween(before, after),
            ...(fifo ? { 'FIFO underruns': fifo.underruns } : {}),
            ...(app ? { 'Tutti receiver: underruns': app.underruns, trimmed: app.trimmed, 'speaker dropouts': app.speakerDropouts } : {}),
          });
        } finally {
          await b.close();
        }
      };
      await reference('A', '(the browser alone)', null);
      await reference('B2', '(two worklets alone)', null);
      const pair = await joinPair(rig, server.url, `tone-floor-${process.pid}-${round}`, '', { sink: 'silent', source: 'silent.monitor' });
      try {
        await reference('A', 'beside a Tutti pair', pair);
        await reference('B2', 'beside a Tutti pair', pair);
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
