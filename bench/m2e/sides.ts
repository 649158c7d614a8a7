// `npx tsx bench/m2e/sides.ts [joins]` (after `npm run build`; needs the m2e rig's packages): which
// side of a Tutti pair carries the part of the mouth-to-ear time that the app's one-way figure does
// not see. One sound-server session; the sender stays while the receiver is replaced `joins` − 1
// times, then the last receiver stays while the sender is replaced as often. Each join: 20 s in
// the room, then the click train, recorded as in m2e (bench/m2e/record.ts), beside the receiving
// app's one-way stat (PeerStats.oneWayMs, median of the recording's seconds) and what each browser
// reports of its own device: the receiver's AudioContext outputLatency, baseLatency and how far its
// render runs ahead of getOutputTimestamp(); the sender's track latency (MediaStreamTrack.stats:
// capture → delivery inside the browser). A residual (gap − stat) that changes when only the
// receiver changes lies on the output side, when only the sender changes on the input side.
// Bench code: the pages are wrapped by an init script here (to reach their AudioContext and
// microphone track); nothing of it is in the app.

import type { Page } from '@playwright/test';
import { rigUnavailable, startRig } from '../../tests/support/audio-rig.ts';
import { joinRoom, launchOnRig, type PeerBrowser } from '../../tests/support/browsers.ts';
import { startServer } from '../../tests/support/server.ts';
import { waitForStreams } from '../lib/app.ts';
import { measureClicks } from './measure.ts';
import { recordClicks, sleep, uploadSignal } from './record.ts';
import { CLICKS, clickTrain } from './signals.ts';
import { RECEIVER_DEVICES, SENDER_DEVICES, appFiguresDuring } from './tutti-pair.ts';

const SETTLE_MS = 20_000;
const TAIL_MS = 300;

/** Runs in each page before the app: keeps its AudioContexts and microphone tracks where the bench can read them. */
function instrument(): void {
  const w = window as unknown as { __ctxs: AudioContext[]; __tracks: MediaStreamTrack[]; AudioContext: typeof AudioContext };
  const Base = window.AudioContext;
  w.__ctxs = [];
  w.__tracks = [];
  w.AudioContext = class extends Base {
    constructor(options?: AudioContextOptions) {
      super(options);
      w.__ctxs.push(this);
    }
  };
  const gum = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
  navigator.mediaDevices.getUserMedia = async (c) => {
    const s = await gum(c);
    w.__tracks.push(...s.getAudioTracks());
    return s;
  };
}

interface OutputReport { outputLatencyMs: number; baseLatencyMs: number; renderAheadMs: number }
interface InputReport { averageLatencyMs: number | null; minimumLatencyMs: number | null }

function outputReport(page: Page): Promise<OutputReport> {
  return page.evaluate(() => {
    const c = (window as unknown as { __ctxs: AudioContext[] }).__ctxs.at(-1)!;
    const t = c.getOutputTimestamp();
    return { outputLatencyMs: c.outputLatency * 1000, baseLatencyMs: c.baseLatency * 1000, renderAheadMs: (c.currentTime - (t.contextTime ?? 0)) * 1000 };
  });
}

function inputReport(page: Page): Promise<InputReport> {
  return page.evaluate(() => {
    const t = (window as unknown as { __tracks: (MediaStreamTrack & { stats?: { averageLatency: number; minimumLatency: number } })[] }).__tracks.at(-1)!;
    return { averageLatencyMs: t.stats?.averageLatency ?? null, minimumLatencyMs: t.stats?.minimumLatency ?? null };
  });
}

const r1 = (x: number | null) => (x === null ? null : Math.round(x * 10) / 10);

async function main(): Promise<void> {
  const joins = Number(process.argv[2] ?? 4);
  if (!(joins >= 2)) throw new Error('usage: npx tsx bench/m2e/sides.ts [joins ≥ 2]');
  const why = rigUnavailable();
  if (why) {
    console.log(`m2e sides skipped: ${why}`);
    return;
  }
  const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);
  const rig = await startRig(log);
  const server = await startServer();
  const rows: Record<string, unknown>[] = [];
  const open: PeerBrowser[] = [];
  try {
    const clicks = await uploadSignal(rig, 'clicks', clickTrain(CLICKS));
    const room = `sides-${process.pid}`;
    const join = async (role: 'sender' | 'receiver'): Promise<PeerBrowser> => {
      const b = await launchOnRig(rig, role === 'sender' ? SENDER_DEVICES : RECEIVER_DEVICES);
      open.push(b);
      await b.page.addInitScript(instrument);
      await joinRoom(b.page, server.url, room, role === 'sender' ? 'Sender' : 'Receiver', { query: '' });
      if (role === 'sender') await b.page.locator('input[name="master"]').fill('0');
      else await b.page.getByRole('button', { name: 'Mute', exact: true }).click();
      return b;
    };
    const leave = async (b: PeerBrowser) => {
      open.splice(open.indexOf(b), 1);
      await b.close();
    };
    const measure = async (label: string, sender: PeerBrowser, receiver: PeerBrowser) => {
      await waitForStreams(receiver.page, 1, 300);
      await sleep(SETTLE_MS);
      const { result, app } = await appFiguresDuring({ sender, receiver, close: async () => {} }, () => recordClicks(rig, clicks, TAIL_MS));
      const m = measureClicks(result, CLICKS.clicks, CLICKS.periodS);
      const out = await outputReport(receiver.page);
      const inp = await inputReport(sender.page);
      const row = {
        join: label,
        'gap ms': m.medianMs,
        'one-way stat ms': app.oneWayStatMs,
        'gap − stat ms': m.medianMs === null || app.oneWayStatMs === null ? null : r1(m.medianMs - app.oneWayStatMs),
        'added p50 ms': app.addedP50Ms,
        'outputLatency + base ms': r1(out.outputLatencyMs + out.baseLatencyMs),
        'render ahead ms': r1(out.renderAheadMs),
        'input avg/min ms': `${r1(inp.averageLatencyMs)}/${r1(inp.minimumLatencyMs)}`,
        depth: app.depth,
      };
      rows.push(row);
      log(JSON.stringify(row));
    };
    let sender = await join('sender');
    let receiver = await join('receiver');
    await measure('S1 R1', sender, receiver);
    for (let i = 2; i <= joins; i++) {
      await leave(receiver);
      receiver = await join('receiver');
      await measure(`S1 R${i}`, sender, receiver);
    }
    for (let i = 2; i <= joins; i++) {
      await leave(sender);
      sender = await join('sender');
      await measure(`S${i} R${joins}`, sender, receiver);
    }
  } finally {
    await Promise.all(open.map((b) => b.close()));
    await server.close();
    await rig.close();
  }
  console.log('\nM2E sides: the sender stays while receivers change, then the receiver stays while senders change');
  console.table(rows);
}

await main();
