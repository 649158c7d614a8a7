// The browser's output over minutes (bench only): one probe page clicking every half second at
// known context times while the speaker's sink is recorded all along. Per click: the true time it
// was rendered by the sink against when the page's render passed it (currentTime) and against
// where getOutputTimestamp() dates it, and whether any frame was skipped or repeated between two
// clicks. Their slopes say whether a delay grows where the browser's APIs cannot see it.

import type { Rig } from '../../../tests/support/audio-rig.ts';
import { launchOnRig } from '../../../tests/support/browsers.ts';
import { serveBenchPages } from '../../lib/pages.ts';
import { sinkLatencies, sleep } from '../record.ts';
import { startTimedRecord } from '../timed-record.ts';
import { PAGE_PERIOD_S, PAIR_MS, nearest, onsetWalls, r2, slope, speakerMs } from './lib.ts';

export async function outputOverTime(rig: Rig, seconds: number, hint: number | AudioContextLatencyCategory, log: (s: string) => void): Promise<Record<string, unknown>> {
  const pages = await serveBenchPages();
  const b = await launchOnRig(rig, { sink: 'spk', source: 'mic' });
  try {
    await b.page.goto(`${pages.url}/m2e/probe.html`);
    const rec = await startTimedRecord(rig, 'spk.monitor');
    await b.page.evaluate(([p, h]) => window.__probeStart(p as number, h as number | AudioContextLatencyCategory), [PAGE_PERIOD_S, hint] as const);
    await sleep((seconds * 1000) / 2);
    const lat = await sinkLatencies(rig);
    await sleep((seconds * 1000) / 2);
    const rep = await b.page.evaluate(() => window.__probeReport());
    const r = await rec.stop();
    r.sinkLatencyMs = lat['spk'] ?? null;
    const o = rep.output;
    const walls = onsetWalls(r);
    // When the render passed context time t: linear between the readings of currentTime and the wall clock.
    const renderWall = (t: number): number | null => {
      for (let i = 1; i < o.readCurrentS.length; i++) {
        if (o.readCurrentS[i]! < t) continue;
        const a = o.readCurrentS[i - 1]!;
        const k = (t - a) / (o.readCurrentS[i]! - a || 1);
        return o.readNowMs[i - 1]! + k * (o.readNowMs[i]! - o.readNowMs[i - 1]!);
      }
      return null;
    };
    const ts: number[] = [];
    const afterRender: number[] = [];
    const afterStamp: number[] = [];
    let skipped = 0;
    let last: number | null = null;
    for (const t of o.clickContextS) {
      const dated = speakerMs(o, t);
      const rendered = renderWall(t);
      const w = dated === null ? null : nearest(walls, dated);
      if (dated === null || rendered === null || w === null || Math.abs(w - dated) > PAIR_MS) continue;
      if (last !== null && Math.abs(w - last - PAGE_PERIOD_S * 1000) > 0.5) skipped++;
      last = w;
      ts.push(t);
      afterRender.push(w - rendered);
      afterStamp.push(w - dated);
    }
    const row = {
      latencyHint: hint,
      seconds,
      clicks: `${ts.length}/${o.clickContextS.length}`,
      'speaker device rate ppm': r2(r.ratePpm),
      'render rate ppm': r2((slope(o.readNowMs.map((x) => x / 1000), o.readCurrentS) - 1) * 1e6),
      'true − render: first → last ms': `${r2(afterRender[0] ?? NaN)} → ${r2(afterRender.at(-1) ?? NaN)}`,
      'its slope ppm': r2(slope(ts, afterRender) * 1000),
      'true − output timestamp: first → last ms': `${r2(afterStamp[0] ?? NaN)} → ${r2(afterStamp.at(-1) ?? NaN)}`,
      'its slope ppm ': r2(slope(ts, afterStamp) * 1000),
      'clicks not 0.5 s apart': skipped,
      'outputLatency + baseLatency ms': r2((o.outputLatencyS.at(-1)! + o.baseLatencyS.at(-1)!) * 1000),
      'dating p90 ms': r2(r.chunkDelayP90Ms),
    };
    log(JSON.stringify(row));
    return row;
  } finally {
    await b.close();
    await pages.close();
  }
}
