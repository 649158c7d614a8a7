// One click's way through a Tutti pair, timed at every step it can be (bench only; the test build,
// for the receiver's tap): the click at the microphone's sink (wall clock, bench/m2e/dating.ts),
// the sender's capture stamp of its quantum (what the app calls its capture time), the receiving
// worker's one-way figure for that very frame (capture stamp → the speaker, by the output clock),
// and the copy at the speaker's sink. What the app misses then splits into the input side (its
// capture stamp against the truth) and the output side (the truth against its speaker time).
// With PAIR_DUMP=/tmp/name each join also writes /tmp/name-<join>.json: the tap's per-frame
// one-way log and output-clock readings, both sinks' click times and the stats seconds, so any
// click (not only the last six seconds') can be found by its capture stamp and held against the
// speaker (how "The output clock's first seconds" in docs/BENCHMARKS.md was measured).

import { writeFileSync } from 'node:fs';
import type { Page } from '@playwright/test';
import type { Rig } from '../../../tests/support/audio-rig.ts';
import { netWorker } from '../../../tests/support/browsers.ts';
import { startServer } from '../../../tests/support/server.ts';
import { stats } from '../../lib/app.ts';
import { recordClicks, sleep, uploadSignal } from '../record.ts';
import { RATE, clickTrain } from '../signals.ts';
import { PAIR_MS, SETTLE_MS, TRAIN, med, nearest, onsetWalls, r2, spanOf } from './lib.ts';
import { joinPair } from '../tutti-pair.ts';

interface TapDump {
  outputClock: { contextS: number[]; wallMs: number[]; offsetMs: number[] };
  pcm: { seqs: number[]; pcm: number[] };
  oneWay: { seqs: number[]; arrivalMs: number[]; transitMs: number[]; oneWayMs: number[]; playFrame: number[] };
}

interface Onset { frame: number; peak: number }

/** The receiver's output onsets so far (the test build's onset tap, ?onsets=1): context frames at which the clicks' copies were rendered. */
async function outputOnsets(page: Page): Promise<Onset[]> {
  return page.evaluate(() => ((document.querySelector('tutti-app') as unknown as { session: { engine: { onsets: Onset[] } } }).session.engine.onsets.slice()));
}

async function readTap(page: Page): Promise<TapDump> {
  const w = await netWorker(page);
  return w.evaluate(() => {
    const t = (self as unknown as { __tuttiTap?: import('../../../workers/test-tap.ts').Tap }).__tuttiTap;
    if (!t) throw new Error('no __tuttiTap: not the test build, or opened without ?test=tap');
    const [id] = [...t.pcm.keys()];
    return { pcm: t.pcm.get(id!)!.toJSON(), oneWay: t.oneWayLog(id!).toJSON(), outputClock: t.outputClock };
  });
}

/** Click onsets in the decoded stream (the tap's last six seconds): [sequence, frame within the quantum]. */
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

export async function pairJoins(rig: Rig, joins: number, log: (s: string) => void): Promise<Record<string, unknown>[]> {
  const server = await startServer({ build: 'test' });
  const rows: Record<string, unknown>[] = [];
  try {
    const clicks = await uploadSignal(rig, 'clicks', clickTrain(TRAIN));
    for (let j = 1; j <= joins; j++) {
      const pair = await joinPair(rig, server.url, `segments-${process.pid}-${j}`, 'test=tap&onsets=1');
      const { receiver } = pair;
      try {
        await sleep(SETTLE_MS);
        const before = (await stats(receiver.page))?.peers[0];
        const seconds: { at: number; p50: number }[] = [];
        let recording = true;
        const sampling = (async () => {
          while (recording) {
            await sleep(1000);
            const v = (await stats(receiver.page))?.peers[0]?.oneWayMs?.p50;
            if (typeof v === 'number') seconds.push({ at: Date.now(), p50: v });
          }
        })();
        const rec = await recordClicks(rig, clicks, 300).finally(() => (recording = false));
        await sampling;
        const p50s = seconds.map((x) => x.p50);
        const peer = (await stats(receiver.page))?.peers[0];
        // Read last: the tap's six seconds of PCM are a large copy that stalls the worker.
        const rendered = (await outputOnsets(receiver.page)).map((o) => o.frame);
        const tap = await readTap(receiver.page);
        const atMouth = onsetWalls(rec.mouth);
        const atSpeaker = onsetWalls(rec.speaker);
        const row = new Map<number, number>();
        tap.oneWay.seqs.forEach((seq, i) => row.set(seq, i));
        const input: number[] = [];
        const output: number[] = [];
        const gaps: number[] = [];
        const figures: number[] = [];
        const offsetGap: number[] = [];
        const renderGap: number[] = [];
        const oc = tap.outputClock;
        const clickRows: { seq: number; arrivalMs: number; figure: number; gap: number }[] = [];
        for (const [seq, k] of streamOnsets(tap.pcm)) {
          const i = row.get(seq);
          if (i === undefined) continue;
          const stamp = tap.oneWay.arrivalMs[i]! - tap.oneWay.transitMs[i]! + (k * 1000) / RATE;
          const dated = stamp + tap.oneWay.oneWayMs[i]!;
          const m = nearest(atMouth, stamp);
          const s = nearest(atSpeaker, dated);
          if (m === null || s === null || Math.abs(stamp - m) > PAIR_MS || Math.abs(dated - s) > PAIR_MS) continue;
          input.push(stamp - m);
          output.push(s - dated);
          gaps.push(s - m);
          figures.push(tap.oneWay.oneWayMs[i]!);
          clickRows.push({ seq, arrivalMs: tap.oneWay.arrivalMs[i]!, figure: tap.oneWay.oneWayMs[i]!, gap: s - m });
          // The worker's speaker offset when the frame arrived, against the plain median of the
          // readings of the two seconds before the frame plays (what the probe found exact).
          let j = oc.wallMs.length - 1;
          while (j > 0 && oc.wallMs[j]! > tap.oneWay.arrivalMs[i]!) j--;
          const used = oc.offsetMs[j]!;
          const ctx = (dated - used) / 1000;
          const offs: number[] = [];
          for (let r = 0; r < oc.contextS.length; r++) if (oc.contextS[r]! <= ctx && oc.contextS[r]! > ctx - 2.05) offs.push(oc.wallMs[r]! - oc.contextS[r]! * 1000);
          if (offs.length) offsetGap.push(med(offs) - used);
          // Where the click's copy was rendered (the output tap) against where the worker expected it.
          const expected = (tap.oneWay.playFrame[i]! + k) | 0;
          let bestD: number | null = null;
          for (const f of rendered) {
            const d = (f - expected) | 0;
            if (Math.abs(d) < 48 * PAIR_MS && (bestD === null || Math.abs(d) < Math.abs(bestD))) bestD = d;
          }
          if (bestD !== null) renderGap.push((bestD * 1000) / RATE);
        }
        const r = {
          join: j,
          clicks: `${gaps.length}/${atMouth.length}`,
          'mouth → ear ms': spanOf(gaps),
          'input: capture stamp − true ms': spanOf(input),
          "the app's one-way for those frames ms": spanOf(figures),
          'output: true − speaker time ms': spanOf(output),
          'of which the speaker offset (plain median − the one used) ms': spanOf(offsetGap),
          'rendered − expected ms': spanOf(renderGap),
          'one-way stat p50 (recording) ms': r2(med(p50s)),
          'stat reads short by ms': r2(med(gaps) - med(p50s)),
          depth: peer?.depth ?? null,
          'underruns/trimmed in the recording': `${(peer?.underruns ?? 0) - (before?.underruns ?? 0)}/${(peer?.trimmed ?? 0) - (before?.trimmed ?? 0)}`,
          'sink latency micsink, spk ms': `${rec.mouth.sinkLatencyMs ?? '–'}, ${rec.speaker.sinkLatencyMs ?? '–'}`,
          'dating p50/p90 mouth, speaker ms': `${r2(rec.mouth.chunkDelayP50Ms)}/${r2(rec.mouth.chunkDelayP90Ms)}, ${r2(rec.speaker.chunkDelayP50Ms)}/${r2(rec.speaker.chunkDelayP90Ms)}`,
        };
        rows.push(r);
        if (process.env['PAIR_DUMP']) writeFileSync(`${process.env['PAIR_DUMP']}-${j}.json`, JSON.stringify({ clicks: clickRows, seconds, oneWay: tap.oneWay, outputClock: tap.outputClock, atMouth, atSpeaker }));
        log(JSON.stringify(r));
      } finally {
        await pair.close();
      }
    }
  } finally {
    await server.close();
  }
  return rows;
}
