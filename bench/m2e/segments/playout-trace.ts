// The receiver's playout second by second on the rig (bench only): a Tutti pair joined as in
// set-up C (default settings), the receiver's stats sampled at 1 Hz for `seconds`, and every
// second with a glitch (underrun, trim, late) printed with what the depth controller held then:
// its target, the held level, the lowest low point, the relief. Tells a glitch at the devices'
// rhythm (a step the depth did not cover) from one at a stall of this machine.

import type { Rig } from '../../../tests/support/audio-rig.ts';
import { writeFileSync } from 'node:fs';
import { netWorker } from '../../../tests/support/browsers.ts';
import { startServer } from '../../../tests/support/server.ts';
import { stats } from '../../lib/app.ts';
import { sleep } from '../record.ts';
import { joinPair } from '../tutti-pair.ts';

export async function playoutTrace(rig: Rig, joins: number, seconds: number, log: (s: string) => void): Promise<Record<string, unknown>[]> {
  const server = await startServer({ build: 'test' });
  const rows: Record<string, unknown>[] = [];
  try {
    for (let j = 1; j <= joins; j++) {
      const pair = await joinPair(rig, server.url, `trace-${process.pid}-${j}`, 'test=tap');
      const { receiver } = pair;
      try {
        const t0 = Date.now();
        let last = { underruns: 0, trimmed: 0, late: 0, received: -1, dropouts: 0, stalls: 0, stalledMs: 0 };
        const glitchAt: number[] = [];
        /** Glitches before the first sample (the stream's first second or so). */
        let startGlitches = 0;
        const targets: number[] = [];
        const lines: string[] = [];
        const perSecond: Record<string, unknown>[] = [];
        while (Date.now() - t0 < seconds * 1000) {
          await sleep(250);
          const msg = await stats(receiver.page);
          const p = msg?.peers[0];
          if (!msg || !p || p.received === last.received) continue;
          const dropouts = msg.output?.events ?? 0;
          const stalls = msg.outputStalls?.count ?? 0;
          const stalledMs = msg.outputStalls?.lostMs ?? 0;
          const t = Math.round((Date.now() - t0) / 1000);
          const du = p.underruns - last.underruns;
          const dt = p.trimmed - last.trimmed;
          const dl = p.late - last.late;
          if (last.received < 0) startGlitches = p.underruns + p.trimmed + p.late;
          if (last.received >= 0) {
            targets.push(p.fill.target);
            perSecond.push({ t, ...p.fill, rate: p.rate, underruns: du, trimmed: dt, late: dl });
            const output = `speaker dropouts +${dropouts - last.dropouts} our output stalled +${stalls - last.stalls} (${Math.round((stalledMs - last.stalledMs) * 10) / 10} ms)`;
            const line = `t ${t}s target ${p.fill.target} held ${p.fill.held} min ${p.fill.min} relief ${p.fill.relief} rate ${p.rate} ${output}`;
            if (du + dt + dl > 0) {
              glitchAt.push(t);
              lines.push(`${line}: underruns +${du} trimmed +${dt} late +${dl}`);
            } else if (p.fill.min < 1.5) lines.push(`${line}: low`);
          }
          last = { underruns: p.underruns, trimmed: p.trimmed, late: p.late, received: p.received, dropouts, stalls, stalledMs };
        }
        for (const l of lines) log(`join ${j}: ${l}`);
        // Read before the tap: its two minutes of records are a large copy that stalls the worker.
        const p = (await stats(receiver.page))?.peers[0];
        // The arrivals' lag against their capture stamps, the last two minutes (the test build's tap).
        const w = await netWorker(receiver.page);
        const lag = await w.evaluate(() => {
          const t = (self as unknown as { __tuttiTap?: import('../../../workers/test-tap.ts').Tap }).__tuttiTap;
          const [id] = [...t!.oneWay.keys()];
          const l = t!.oneWay.get(id!)!.toJSON();
          return { arrivalMs: l.arrivalMs, transitMs: l.transitMs };
        });
        const file = `/tmp/tutti-playout-trace-${j}.json`;
        writeFileSync(file, JSON.stringify({ t0, perSecond, lag }));
        log(`join ${j}: per-second state and the arrivals' lag in ${file}`);
        rows.push({ join: j, seconds, underruns: p?.underruns, trimmed: p?.trimmed, late: p?.late, 'glitches at start': startGlitches, 'glitch seconds': glitchAt.join(' '), 'target first→last': `${targets[0]}→${targets.at(-1)}`, 'target min–max': `${Math.min(...targets)}–${Math.max(...targets)}` });
      } finally {
        await pair.close();
      }
    }
  } finally {
    await server.close();
  }
  return rows;
}
