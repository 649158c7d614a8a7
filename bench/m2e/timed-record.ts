// Records a rig device with each chunk's arrival time, so that its samples can be dated on the
// wall clock (bench/m2e/dating.ts says how, and why the dating is a line, not a constant).

import { spawn } from 'node:child_process';
import type { Rig } from '../../tests/support/audio-rig.ts';
import { stop } from '../../tests/support/audio-rig.ts';
import { envelope, type TimedRecording } from './dating.ts';
import { CHANNELS, RATE } from './signals.ts';

export { wallOf, type TimedRecording } from './dating.ts';

export interface TimedRecorder {
  stop(): Promise<TimedRecording>;
}

/** Starts recording `source` (e.g. 'spk.monitor'); resolves once audio flows. */
export async function startTimedRecord(rig: Rig, source: string, latencyMs = 100): Promise<TimedRecorder> {
  const rec = spawn('parec', ['-d', source, '--format=s16le', `--rate=${RATE}`, `--channels=${CHANNELS}`, `--latency-msec=${latencyMs}`], { env: rig.env(), stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  const arrivals: number[] = [];
  const framesAfter: number[] = [];
  let bytes = 0;
  const streaming = new Promise<void>((resolve, reject) => {
    rec.stdout.on('data', (b: Buffer) => {
      const now = performance.timeOrigin + performance.now();
      chunks.push(b);
      bytes += b.length;
      arrivals.push(now);
      framesAfter.push(Math.floor(bytes / 2 / CHANNELS));
      resolve();
    });
    rec.on('exit', (code) => reject(new Error(`parec ${source} exited (${code}) before recording`)));
  });
  await streaming;
  return {
    async stop() {
      await stop(rec);
      const all = Buffer.concat(chunks);
      const samples = new Int16Array(all.buffer, all.byteOffset, Math.floor(all.length / 2 / CHANNELS) * CHANNELS);
      return { samples, chunks: arrivals.length, arrivalsMs: arrivals, framesAfter, ...envelope(arrivals, framesAfter) };
    },
  };
}
