// The browser alone, at both ends the app's one-way figure rests on (bench only): one fresh probe
// page per join (bench/m2e/probe.ts). A click train into the microphone's sink, dated there on the
// wall clock, against the capture time the browser gives each onset in the microphone's AudioData
// (as workers/track-capture.ts reads it); the page's own clicks at known context times, dated at
// the speaker's sink, against getOutputTimestamp() (as workers/speaker-time.ts reads it).

import { spawnSync } from 'node:child_process';
import type { Rig } from '../../../tests/support/audio-rig.ts';
import { launchOnRig } from '../../../tests/support/browsers.ts';
import { serveBenchPages } from '../../lib/pages.ts';
import { detectOnsets, frameMagnitude } from '../onsets.ts';
import { sinkLatencies, sleep, uploadSignal } from '../record.ts';
import { CHANNELS, RATE, clickTrain } from '../signals.ts';
import { startTimedRecord } from '../timed-record.ts';
import { PAGE_PERIOD_S, PAIR_MS, SETTLE_MS, TRAIN, med, nearest, onsetWalls, r2, speakerMs, spanOf } from './lib.ts';

export async function probeJoins(rig: Rig, joins: number, log: (s: string) => void): Promise<Record<string, unknown>[]> {
  const pages = await serveBenchPages();
  const rows: Record<string, unknown>[] = [];
  try {
    const clicks = await uploadSignal(rig, 'clicks', clickTrain(TRAIN));
    for (let j = 1; j <= joins; j++) {
      const b = await launchOnRig(rig, { sink: 'spk', source: 'mic' });
      // SECOND_STREAM=1: another browser renders near-silence into the speaker's sink meanwhile.
      const other = process.env['SECOND_STREAM'] ? await launchOnRig(rig, { sink: 'spk', source: 'silent.monitor' }) : null;
      try {
        if (other) {
          await other.page.goto(`${pages.url}/m2e/probe.html`);
          await other.page.evaluate(() => window.__probeSilence());
        }
        await b.page.goto(`${pages.url}/m2e/probe.html`);
        await b.page.evaluate((p) => window.__probeStart(p), PAGE_PERIOD_S);
        await sleep(SETTLE_MS);
        const spk = await startTimedRecord(rig, 'spk.monitor');
        const mic = await startTimedRecord(rig, 'micsink.monitor');
        await sleep(300);
        spawnSync('pactl', ['play-sample', clicks.name, process.env['CLICK_SINK'] ?? 'micsink'], { env: rig.env() });
        await sleep(clicks.seconds * 1000 / 2);
        const lat = await sinkLatencies(rig);
        await sleep(clicks.seconds * 1000 / 2 + 300);
        const [rs, rm] = [await spk.stop(), await mic.stop()];
        rs.sinkLatencyMs = lat['spk'] ?? null;
        rm.sinkLatencyMs = lat['micsink'] ?? null;
        const rep = await b.page.evaluate(() => window.__probeReport());
        const trueMic = onsetWalls(rm);
        const stamped = rep.input.onsetsUs.map((u) => u / 1000);
        const inErr = trueMic.map((t) => (nearest(stamped, t) ?? NaN) - t).filter((e) => Math.abs(e) < PAIR_MS);
        const trueSpk = onsetWalls(rs);
        const outErr: number[] = [];
        for (const t of rep.output.clickContextS) {
          const s = speakerMs(rep.output, t);
          const n = s === null ? null : nearest(trueSpk, s);
          if (s !== null && n !== null && Math.abs(n - s) < PAIR_MS) outErr.push(n - s);
        }
        // The recording's spacing of the page's clicks against their context spacing: frames the
        // output dropped or repeated (0 when every frame rendered was played once).
        const spkFrames = detectOnsets(frameMagnitude(rs.samples, CHANNELS), RATE);
        const spacing = spkFrames.slice(1).map((f, i) => f - spkFrames[i]! - PAGE_PERIOD_S * RATE);
        const o = rep.output;
        const last = o.readContextS.length - 1;
        const row = {
          join: j,
          'in clicks': `${inErr.length}/${trueMic.length}`,
          'input: browser − true ms': spanOf(inErr),
          'capture buffer frames': [...new Set(rep.input.frames)].join('/'),
          'out clicks': `${outErr.length}/${trueSpk.length}`,
          'output: true − browser ms': spanOf(outErr),
          'frames skipped/repeated': [...new Set(spacing)].join('/'),
          'one-way reads short by ms': r2(med(inErr) + med(outErr)),
          'outputLatency + baseLatency ms': r2((o.outputLatencyS[last]! + o.baseLatencyS[last]!) * 1000),
          'sink latency micsink, spk ms': `${lat['micsink'] ?? '–'}, ${lat['spk'] ?? '–'}`,
          'dating p90 ms': r2(Math.max(rs.chunkDelayP90Ms, rm.chunkDelayP90Ms)),
        };
        rows.push(row);
        log(JSON.stringify(row));
      } finally {
        await b.close();
        await other?.close();
      }
    }
  } finally {
    await pages.close();
  }
  return rows;
}
