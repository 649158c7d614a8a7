// The receiver's playout second by second on the rig (bench only): a Tutti pair joined as in
// set-up C (default settings), the receiver's stats sampled at 1 Hz for `seconds`, and every
// second with a glitch (underrun, trim, late) printed with what the depth controller held then:
// its target, the held level, the lowest low point, the relief. Tells a glitch at the devices'
// rhythm (a step the depth did not cover) from one at a stall of this machine.
// TRACE_STALL=<s>:<ms> stops the rig's sound server for <ms> at <s> seconds into odd joins (SIGSTOP,
// then SIGCONT): a stall of both browsers' audio at once, as the m2e runs saw now and then, with
// the even joins as the control. Each second also records the drift shown.
// TRACE_RECORD=<s> records both sinks from <s> seconds into every join as C settled does (a minute,
// then the click train), and prints the rig's drift beside the drift shown at the end: the m2e's
// recordings add sound-server clients, which can move the devices' rates.

import type { Rig } from '../../../tests/support/audio-rig.ts';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { netWorker } from '../../../tests/support/browsers.ts';
import { startServer } from '../../../tests/support/server.ts';
import { stats } from '../../lib/app.ts';
import { recordClicks, sleep, uploadSignal, type ClickRecording } from '../record.ts';
import { clickTrain } from '../signals.ts';
import { TRAIN } from './lib.ts';
import { joinPair } from '../tutti-pair.ts';

export async function playoutTrace(rig: Rig, joins: number, seconds: number, log: (s: string) => void): Promise<Record<string, unknown>[]> {
  const server = await startServer({ build: 'test' });
  const rows: Record<string, unknown>[] = [];
  const [stallAtS, stallMs] = (process.env.TRACE_STALL ?? '').split(':').map(Number);
  const pulsePid = Number(spawnSync('pgrep', ['-f', `pulseaudio -n -F ${rig.dir}`], { encoding: 'utf8' }).stdout.trim().split('\n')[0]);
  if (stallAtS && !pulsePid) throw new Error('TRACE_STALL: the rig\'s PulseAudio was not found');
  const recordAtS = Number(process.env.TRACE_RECORD ?? 0);
  const clicks = recordAtS ? await uploadSignal(rig, 'clicks', clickTrain(TRAIN)) : null;
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
        let stalled = !(stallAtS && stallMs && j % 2 === 1);
        let recording: Promise<ClickRecording> | null = null;
        while (Date.now() - t0 < seconds * 1000) {
          await sleep(250);
          if (clicks && !recording && Date.now() - t0 >= recordAtS * 1000) recording = recordClicks(rig, clicks, 300, 60_000);
          if (!stalled && Date.now() - t0 >= stallAtS! * 1000) {
            stalled = true;
            process.kill(pulsePid, 'SIGSTOP');
            await sleep(stallMs!);
            process.kill(pulsePid, 'SIGCONT');
            log(`join ${j}: the sound server stopped for ${stallMs} ms at ${Math.round((Date.now() - t0) / 1000)} s`);
          }
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
            perSecond.push({ t, ...p.fill, rate: p.rate, underruns: du, trimmed: dt, late: dl, driftPpm: p.driftPpm, driftSeconds: p.driftSeconds, stalls: stalls - last.stalls, stalledMs: stalledMs - last.stalledMs });
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
        const rec = recording ? await recording : null;
        const rigDrift = rec ? Math.round(((1 + rec.mouth.ratePpm * 1e-6) / (1 + rec.speaker.ratePpm * 1e-6) - 1) * 1e7) / 10 : null;
        if (rec) log(`join ${j}: rig mouth ${rec.mouth.ratePpm.toFixed(1)} ppm, speaker ${rec.speaker.ratePpm.toFixed(1)} ppm, drift ${rigDrift} ppm`);
        // Read before the tap: its two minutes of records are a large copy that stalls the worker.
        const p = (await stats(receiver.page))?.peers[0];
        // The arrivals' lag against their capture stamps, the last two minutes (the test build's tap).
        const w = await netWorker(receiver.page);
        const lag = await w.evaluate(() => {
          const t = (self as unknown as { __tuttiTap?: import('../../../workers/test-tap.ts').Tap }).__tuttiTap;
          const [id] = [...t!.oneWay.keys()];
          const l = t!.oneWay.get(id!)!.toJSON();
          return { seqs: l.seqs, arrivalMs: l.arrivalMs, transitMs: l.transitMs, outputClock: t!.outputClock };
        });
        const file = `/tmp/tutti-playout-trace-${j}.json`;
        writeFileSync(file, JSON.stringify({ t0, perSecond, lag, rig: rec ? { mouthPpm: rec.mouth.ratePpm, speakerPpm: rec.speaker.ratePpm, speakerArrivalsMs: rec.speaker.arrivalsMs, speakerFrames: rec.speaker.framesAfter, mouthArrivalsMs: rec.mouth.arrivalsMs, mouthFrames: rec.mouth.framesAfter } : null }));
        log(`join ${j}: per-second state and the arrivals' lag in ${file}`);
        const drifts = perSecond.flatMap((x) => (typeof x.driftPpm === 'number' ? [x.driftPpm] : []));
        rows.push({ join: j, seconds, 'rig drift': rigDrift ?? '–', 'drift first→last': drifts.length ? `${drifts[0]}→${drifts.at(-1)}` : '–', 'drift min–max': drifts.length ? `${Math.min(...drifts)}–${Math.max(...drifts)}` : '–', underruns: p?.underruns, trimmed: p?.trimmed, late: p?.late, 'glitches at start': startGlitches, 'glitch seconds': glitchAt.join(' '), 'target first→last': `${targets[0]}→${targets.at(-1)}`, 'target min–max': `${Math.min(...targets)}–${Math.max(...targets)}` });
      } finally {
        await pair.close();
      }
    }
  } finally {
    await server.close();
  }
  return rows;
}
