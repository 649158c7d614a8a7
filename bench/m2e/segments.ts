// `npx tsx bench/m2e/segments.ts [joins]` (after `npx vite build --config bench/vite.config.ts`;
// needs the m2e rig's packages): how far the browser's own dating of sound is from the truth, at
// the two ends Tutti's one-way figure rests on, one fresh browser process per join.
//
// - Input: a click train plays into the microphone's sink; a recorder on that sink's monitor dates
//   each click on the wall clock (bench/m2e/timed-record.ts), and the probe page reads the
//   microphone's track as the app does and reports the capture time the browser gives each onset.
// - Output: the probe page clicks at known context times; a recorder on the speaker's monitor dates
//   each click, against where getOutputTimestamp() (read twenty times a second, the median of two
//   seconds, as workers/speaker-time.ts) said it would be played.
//
// input error = browser's capture time − true (positive: the app thinks the sound came later, so its
// one-way figure reads short by that much); output error = true − browser's speaker time (positive:
// the speaker plays later than the app dates it, same sign for the one-way). Their sum is what the
// app's one-way figure misses on this rig.

import type { Page } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import { rigUnavailable, startRig, type Rig } from '../../tests/support/audio-rig.ts';
import { joinRoom, launchOnRig, netWorker } from '../../tests/support/browsers.ts';
import { startServer } from '../../tests/support/server.ts';
import { stats, waitForStreams } from '../lib/app.ts';
import { serveBenchPages } from '../lib/pages.ts';
import { detectOnsets, frameMagnitude, pairClicks } from './onsets.ts';
import type { ProbeReport } from './probe-protocol.ts';
import { sleep, uploadSignal } from './record.ts';
import { CHANNELS, RATE, clickTrain, type ClickSpec } from './signals.ts';
import { startTimedRecord, wallOf, type TimedRecording } from './timed-record.ts';

const TRAIN: ClickSpec = { clicks: 12, periodS: 1, firstS: 0.5, pulseMs: 2, amplitude: 0.5, tailS: 0.7 };
const SETTLE_MS = Number(process.env['SETTLE_MS'] ?? 20_000);
const PAGE_PERIOD_S = 0.5;

const r2 = (x: number) => Math.round(x * 100) / 100;
const med = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN;
};

function onsetWalls(r: TimedRecording): number[] {
  return detectOnsets(frameMagnitude(r.samples, CHANNELS), RATE).map((f) => wallOf(r, f));
}

function nearest(xs: number[], x: number): number | null {
  let best: number | null = null;
  for (const v of xs) if (best === null || Math.abs(v - x) < Math.abs(best - x)) best = v;
  return best;
}

/** Where the app would date context time `t` (s) at the speaker: the median offset of the readings of the two seconds before. */
function speakerMs(o: ProbeReport['output'], t: number): number | null {
  const offs: number[] = [];
  for (let i = 0; i < o.readContextS.length; i++) {
    const c = o.readContextS[i]!;
    if (c <= t && c > t - 2.05) offs.push(o.readWallMs[i]! - c * 1000);
  }
  return offs.length ? t * 1000 + med(offs) : null;
}

function pulseLatencies(rig: Rig): string {
  const text = (what: string) => spawnSync('pactl', ['list', what], { env: rig.env(), encoding: 'utf8' }).stdout;
  const pick = (t: string, re: RegExp) => [...t.matchAll(re)].map((m) => m[1]).join(' | ');
  const si = text('sink-inputs');
  const so = text('source-outputs');
  return `sink-inputs buffer ${pick(si, /Buffer Latency: (\d+ usec)/g)}; sink ${pick(si, /Sink Latency: (\d+ usec)/g)} · source-outputs buffer ${pick(so, /Buffer Latency: (\d+ usec)/g)}; source ${pick(so, /Source Latency: (\d+ usec)/g)}`;
}

interface TapDump {
  pcm: { seqs: number[]; pcm: number[] };
  oneWay: { seqs: number[]; arrivalMs: number[]; transitMs: number[]; oneWayMs: number[] };
}

async function readTap(page: Page): Promise<TapDump> {
  const w = await netWorker(page);
  return w.evaluate(() => {
    const t = (self as unknown as { __tuttiTap?: import('../../workers/test-tap.ts').Tap }).__tuttiTap;
    if (!t) throw new Error('no __tuttiTap');
    const [id] = [...t.pcm.keys()];
    return { pcm: t.pcm.get(id!)!.toJSON(), oneWay: t.oneWayLog(id!).toJSON() };
  });
}

/** Click onsets in the decoded stream: [sequence, frame within the quantum]. */
function streamOnsets(pcm: TapDump['pcm']): [number, number][] {
  const q = pcm.seqs.map((seq, i) => [seq, i] as const).sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  let quietSince = -Infinity;
  let lastSeq = -1;
  let above = false;
  for (const [seq, i] of q) {
    if (seq === lastSeq) continue;
    lastSeq = seq;
    for (let k = 0; k < 128; k++) {
      const x = Math.abs(pcm.pcm[i * 256 + 2 * k]!) / 2 ** 23;
      const pos = seq * 128 + k;
      if (x > 0.1) {
        if (!above && pos - quietSince > RATE / 20) out.push([seq, k]);
        above = true;
      } else {
        if (above) quietSince = pos;
        above = false;
      }
    }
  }
  return out;
}

/** The Tutti pair (test build: the receiver's tap), one pair per join, truth at both ends. */
async function pairs(rig: Rig, joins: number, log: (s: string) => void): Promise<Record<string, unknown>[]> {
  const server = await startServer({ build: 'test' });
  const rows: Record<string, unknown>[] = [];
  try {
    await uploadSignal(rig, 'clicks', clickTrain(TRAIN));
    for (let j = 1; j <= joins; j++) {
      const sender = await launchOnRig(rig, { sink: 'spk', source: 'mic' });
      const receiver = await launchOnRig(rig, { sink: 'spk', source: 'silent.monitor' });
      try {
        const room = `seg-${process.pid}-${j}`;
        await joinRoom(sender.page, server.url, room, 'Sender', { query: '' });
        await sender.page.locator('input[name="master"]').fill('0');
        await joinRoom(receiver.page, server.url, room, 'Receiver', { query: 'test=tap' });
        await receiver.page.getByRole('button', { name: 'Mute', exact: true }).click();
        await waitForStreams(receiver.page, 1, 300);
        await sleep(SETTLE_MS);
        const before = (await stats(receiver.page))?.peers[0];
        // As m2e: the train into both sinks at once, one recorder on the speaker's monitor: the direct
        // click dates the microphone (the self-check above: both sinks render it within 0.1 ms).
        const spk = await startTimedRecord(rig, 'spk.monitor');
        const micRec = await startTimedRecord(rig, 'micsink.monitor');
        await sleep(300);
        spawnSync('pactl', ['play-sample', 'clicks', 'both'], { env: rig.env() });
        const p50s: number[] = [];
        for (let t = 0; t < TRAIN.firstS + TRAIN.clicks * TRAIN.periodS + 0.4; t += 1) {
          await sleep(1000);
          const v = (await stats(receiver.page))?.peers[0]?.oneWayMs?.p50;
          if (typeof v === 'number') p50s.push(v);
        }
        const st = await stats(receiver.page);
        const tap = await readTap(receiver.page);
        const rs = await spk.stop();
        const rm = await micRec.stop();
        const atMic = onsetWalls(rm);
        const peer = st?.peers[0];
        const p = pairClicks(detectOnsets(frameMagnitude(rs.samples, CHANNELS), RATE), RATE, { expectedClicks: TRAIN.clicks, periodS: TRAIN.periodS });
        const wall = (f: number) => wallOf(rs, f);
        const trueMic = p.direct.map(wall);
        const trueSpk = p.direct.flatMap((d, i) => (p.gapsMs[i] === null ? [] : [wall(d) + p.gapsMs[i]!]));
        const bySeq = new Map<number, number>();
        tap.oneWay.seqs.forEach((seq, i) => bySeq.set(seq, i));
        const ins: number[] = [];
        const outs: number[] = [];
        const gaps: number[] = [];
        const apps: number[] = [];
        const rigSkew: number[] = [];
        for (const [seq, k] of streamOnsets(tap.pcm)) {
          const i = bySeq.get(seq);
          if (i === undefined) continue;
          const stamp = tap.oneWay.arrivalMs[i]! - tap.oneWay.transitMs[i]! + (k * 1000) / RATE;
          const m = nearest(trueMic, stamp);
          const appSpk = stamp + tap.oneWay.oneWayMs[i]!;
          const sp = nearest(trueSpk, appSpk);
          if (m === null || sp === null || Math.abs(stamp - m) > 200 || Math.abs(appSpk - sp) > 200) continue;
          ins.push(stamp - m);
          const mm = nearest(atMic, m);
          if (mm !== null) rigSkew.push(m - mm);
          outs.push(sp - appSpk);
          gaps.push(sp - m);
          apps.push(tap.oneWay.oneWayMs[i]!);
        }
        const row = {
          join: j,
          clicks: `${gaps.length}/${trueMic.length}`,
          'gap ms (true)': `${r2(med(gaps))} (${r2(Math.min(...gaps))}…${r2(Math.max(...gaps))})`,
          'app one-way of the clicks': r2(med(apps)),
          'stat p50 (window median)': r2(med(p50s)),
          'stat p50s': p50s.map(Math.round).join(' '),
          'direct at spk − at micsink ms': `${r2(med(rigSkew))} (${r2(Math.min(...rigSkew))}…${r2(Math.max(...rigSkew))})`,
          'in err ms': `${r2(med(ins))} (${r2(Math.min(...ins))}…${r2(Math.max(...ins))})`,
          'out err ms': `${r2(med(outs))} (${r2(Math.min(...outs))}…${r2(Math.max(...outs))})`,
          'gap − app': r2(med(gaps) - med(apps)),
          depth: peer?.depth ?? null,
          'fill held': peer?.fill.held ?? null,
          'underruns/trimmed (window)': `${(peer?.underruns ?? 0) - (before?.underruns ?? 0)}/${(peer?.trimmed ?? 0) - (before?.trimmed ?? 0)} of ${peer?.underruns}/${peer?.trimmed}`,
        };
        rows.push(row);
        log(JSON.stringify(row));
        log(`  in: ${ins.map(r2).join(' ')}`);
        log(`  out: ${outs.map(r2).join(' ')}`);
      } finally {
        await Promise.all([sender.close(), receiver.close()]);
      }
    }
  } finally {
    await server.close();
  }
  return rows;
}

/** One probe page for `seconds`, the speaker recorded all along: the output's true delay over time. */
async function longOutput(rig: Rig, seconds: number, log: (s: string) => void, hint: number | AudioContextLatencyCategory = 0): Promise<void> {
  const pages = await serveBenchPages();
  const b = await launchOnRig(rig, { sink: 'spk', source: 'mic' });
  try {
    await b.page.goto(`${pages.url}/m2e/probe.html`);
    const rec = await startTimedRecord(rig, 'spk.monitor');
    await b.page.evaluate(([p, h]) => window.__probeStart(p as number, h as number | AudioContextLatencyCategory), [PAGE_PERIOD_S, hint] as const);
    await sleep(seconds * 1000);
    const rep = await b.page.evaluate(() => window.__probeReport());
    const r = await rec.stop();
    const o = rep.output;
    const frames = detectOnsets(frameMagnitude(r.samples, CHANNELS), RATE);
    const walls = frames.map((f) => wallOf(r, f));
    // When the render passed each click (linear between readings of currentTime and now).
    const renderWall = (t: number): number | null => {
      for (let i = 1; i < o.readCurrentS.length; i++) {
        if (o.readCurrentS[i]! >= t) {
          const a = o.readCurrentS[i - 1]!;
          const k = (t - a) / (o.readCurrentS[i]! - a || 1);
          return o.readNowMs[i - 1]! + k * (o.readNowMs[i]! - o.readNowMs[i - 1]!);
        }
      }
      return null;
    };
    const t0 = o.clickContextS[0]!;
    const lines: string[] = [];
    let lastWall: number | null = null;
    for (const t of o.clickContextS) {
      const pred = speakerMs(o, t);
      const rw = renderWall(t);
      if (pred === null || rw === null) continue;
      const w = nearest(walls, pred);
      if (w === null || Math.abs(w - pred) > 200) continue;
      const spacing = lastWall === null ? '' : r2(w - lastWall - PAGE_PERIOD_S * 1000);
      lastWall = w;
      lines.push(`${r2(t - t0)}\t${r2(w - rw)}\t${r2(w - pred)}\t${spacing}`);
    }
    // Render rate: currentTime against the wall clock, least squares over the whole run.
    const xs = o.readNowMs.map((x) => x / 1000);
    const ys = o.readCurrentS;
    const n = xs.length;
    const mx = xs.reduce((a, b) => a + b, 0) / n;
    const my = ys.reduce((a, b) => a + b, 0) / n;
    let sxy = 0;
    let sxx = 0;
    for (let i = 0; i < n; i++) {
      sxy += (xs[i]! - mx) * (ys[i]! - my);
      sxx += (xs[i]! - mx) ** 2;
    }
    const slopeOf = (col: number) => {
      const pts = lines.map((l) => l.split('\t').map(Number)).filter((v) => Number.isFinite(v[col]));
      const k = pts.length;
      const ax = pts.reduce((a, v) => a + v[0]!, 0) / k;
      const ay = pts.reduce((a, v) => a + v[col]!, 0) / k;
      let nxy = 0;
      let nxx = 0;
      for (const v of pts) {
        nxy += (v[0]! - ax) * (v[col]! - ay);
        nxx += (v[0]! - ax) ** 2;
      }
      return `${r2((nxy / nxx) * 1000)} ppm (first ${pts[0]?.[col]}, last ${pts[k - 1]?.[col]} ms)`;
    };
    log(`recorder: ${r.chunks} chunks, delay p50/p90 ${r2(r.chunkDelayP50Ms)}/${r2(r.chunkDelayP90Ms)} ms, the speaker's frames per wall second ${r2(r.ratePpm)} ppm off nominal`);
    log(`latencyHint ${hint}: baseLatency ${r2(o.baseLatencyS.at(-1)! * 1000)} ms, outputLatency ${r2(o.outputLatencyS.at(-1)! * 1000)} ms; render rate (currentTime per wall second) − 1: ${r2((sxy / sxx - 1) * 1e6)} ppm over ${r2(xs[n - 1]! - xs[0]!)} s; ${walls.length} clicks recorded; true speaker − render: ${slopeOf(1)}; true speaker − output timestamp: ${slopeOf(2)}; spacing errors: ${lines.filter((l) => { const v = Number(l.split('\t')[3]); return Math.abs(v) > 0.5; }).length}`);
    if (process.env['LINES']) console.log(lines.join('\n'));
  } finally {
    await b.close();
    await pages.close();
  }
}

async function main(): Promise<void> {
  if (process.argv[2] === 'long') {
    const rig = await startRig(console.log);
    try {
      const hints = (process.argv[4] ?? '0').split(',').map((h) => (/^[0-9.]+$/.test(h) ? Number(h) : (h as AudioContextLatencyCategory)));
      for (const h of hints) await longOutput(rig, Number(process.argv[3] ?? 240), console.log, h);
    } finally {
      await rig.close();
    }
    return;
  }
  if (process.argv[2] === 'pair') {
    const why = rigUnavailable();
    if (why) return console.log(`m2e segments skipped: ${why}`);
    const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);
    const rig = await startRig(log);
    try {
      console.table(await pairs(rig, Number(process.argv[3] ?? 3), log));
    } finally {
      await rig.close();
    }
    return;
  }
  const joins = Number(process.argv[2] ?? 3);
  const why = rigUnavailable();
  if (why) {
    console.log(`m2e segments skipped: ${why}`);
    return;
  }
  const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);
  const rig = await startRig(log);
  const pages = await serveBenchPages();
  const rows: Record<string, unknown>[] = [];
  try {
    const clicks = await uploadSignal(rig, 'clicks', clickTrain(TRAIN));
    // Self-check: one train into both sinks at once; the two recorders must date each click alike.
    {
      const a = await startTimedRecord(rig, 'spk.monitor');
      const b = await startTimedRecord(rig, 'micsink.monitor');
      await sleep(300);
      spawnSync('pactl', ['play-sample', 'clicks', 'both'], { env: rig.env() });
      await sleep(clicks.seconds * 1000 + 300);
      const [ra, rb] = [await a.stop(), await b.stop()];
      const wa = onsetWalls(ra);
      const wb = onsetWalls(rb);
      const d = wa.map((w) => w - (nearest(wb, w) ?? NaN));
      log(`self-check: ${wa.length}/${wb.length} clicks; spk − micsink dating: median ${r2(med(d))} ms (${r2(Math.min(...d))}…${r2(Math.max(...d))}); chunk delay p50/p90 ${r2(ra.chunkDelayP50Ms)}/${r2(ra.chunkDelayP90Ms)} and ${r2(rb.chunkDelayP50Ms)}/${r2(rb.chunkDelayP90Ms)} ms`);
    }
    for (let j = 1; j <= joins; j++) {
      const b = await launchOnRig(rig, { sink: 'spk', source: 'mic' });
      try {
        const page: Page = b.page;
        await page.goto(`${pages.url}/m2e/probe.html`);
        await page.evaluate((p) => window.__probeStart(p), PAGE_PERIOD_S);
        await sleep(SETTLE_MS);
        const spk = await startTimedRecord(rig, 'spk.monitor');
        const mic = await startTimedRecord(rig, 'micsink.monitor');
        await sleep(300);
        spawnSync('pactl', ['play-sample', 'clicks', 'micsink'], { env: rig.env() });
        await sleep(clicks.seconds * 1000 + 300);
        const pulse = pulseLatencies(rig);
        const [rs, rm] = [await spk.stop(), await mic.stop()];
        const rep = await page.evaluate(() => window.__probeReport());
        // Input.
        const trueMic = onsetWalls(rm);
        const stamped = rep.input.onsetsUs.map((u) => u / 1000);
        const inErr = trueMic.map((t) => (nearest(stamped, t) ?? NaN) - t).filter((e) => Math.abs(e) < 200);
        // Output.
        const trueSpk = onsetWalls(rs);
        const outErr: number[] = [];
        for (const t of rep.output.clickContextS) {
          const s = speakerMs(rep.output, t);
          if (s === null) continue;
          const n = nearest(trueSpk, s);
          if (n !== null && Math.abs(n - s) < 200) outErr.push(n - s);
        }
        // The recording's own spacing of the page's clicks against their context spacing: frames the
        // output dropped or repeated (0 when every frame the context rendered was played once).
        const spkFrames = detectOnsets(frameMagnitude(rs.samples, CHANNELS), RATE);
        const spacingErr = spkFrames.slice(1).map((f, i) => f - spkFrames[i]! - PAGE_PERIOD_S * RATE);
        const o = rep.output;
        const last = o.readContextS.length - 1;
        const row = {
          join: j,
          'in: clicks': `${inErr.length}/${trueMic.length}`,
          'in err ms (med, min…max)': `${r2(med(inErr))} (${r2(Math.min(...inErr))}…${r2(Math.max(...inErr))})`,
          'capture buffer frames': [...new Set(rep.input.frames)].join('/'),
          'buffer age p50 ms': r2(med(rep.input.ages) / 1000),
          'out: clicks': `${outErr.length}/${trueSpk.length}`,
          'out err ms (med, min…max)': `${r2(med(outErr))} (${r2(Math.min(...outErr))}…${r2(Math.max(...outErr))})`,
          'spk spacing − context frames': [...new Set(spacingErr)].join('/'),
          'one-way misses ms': r2(med(inErr) + med(outErr)),
          'outputLatency+base ms': r2((o.outputLatencyS[last]! + o.baseLatencyS[last]!) * 1000),
          'render lead ms': r2((o.readCurrentS[last]! - o.readContextS[last]!) * 1000),
          'worker−page timeOrigin ms': r2(rep.input.workerTimeOrigin - rep.pageTimeOrigin),
        };
        rows.push(row);
        log(JSON.stringify(row));
        log(`  pulse: ${pulse}`);
        log(`  rec dating: chunk delay p50/p90 spk ${r2(rs.chunkDelayP50Ms)}/${r2(rs.chunkDelayP90Ms)}, mic ${r2(rm.chunkDelayP50Ms)}/${r2(rm.chunkDelayP90Ms)} ms`);
        log(`  in errs: ${inErr.map(r2).join(' ')}`);
        log(`  out errs: ${outErr.map(r2).join(' ')}`);
      } finally {
        await b.close();
      }
    }
  } finally {
    await pages.close();
    await rig.close();
  }
  console.table(rows);
}

await main();
