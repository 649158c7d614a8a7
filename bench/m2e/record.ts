// Playing and recording through the rig (Node): a signal into a sink while the speaker monitor is
// recorded, and the sound server's own loop that checks the rig itself.
//
// The gap is measured between two events on the monitor's own timeline, after the combine sink has
// split the stream, so neither how the signal is played nor the recorder's buffer is part of it:
// both are chosen for robustness on a loaded machine, not for latency.

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Rig } from '../../tests/support/audio-rig.ts';
import { stop } from '../../tests/support/audio-rig.ts';
import { CHANNELS, RATE, wav } from './signals.ts';
import { startTimedRecord, type TimedRecording } from './timed-record.ts';

const FORMAT = ['--format=s16le', `--rate=${RATE}`, `--channels=${CHANNELS}`];
/** The rig's own loop: part of the path it measures, so small. */
const LOOP_LATENCY_MS = 5;
/** The recorder: large, so a busy bench process never makes the server drop audio. */
const SAFE_LATENCY = '--latency-msec=100';

/**
 * Loads `samples` (interleaved, `channels` wide) into the sound server's sample cache as `name`.
 * The server then plays it from memory: a player process on a loaded 2-core machine underruns even
 * with a 100 ms buffer, which stretches the click train (its clicks no longer 1 s apart) and breaks
 * the tone (a dropout that is not the browser's). The cache keeps float32, at most 16 MB a sample.
 */
export async function uploadSignal(rig: Rig, name: string, samples: Int16Array, channels = CHANNELS): Promise<Signal> {
  const path = join(rig.dir, `${name}.wav`);
  writeFileSync(path, wav(samples, channels));
  await run('pactl', ['upload-sample', path, name], rig.env());
  return { name, seconds: samples.length / channels / RATE };
}

export interface Signal {
  name: string;
  seconds: number;
}

/**
 * Records `spk.monitor` while `signal` plays into `sink`, from just before playback until `tailMs`
 * after it ends (the last copy must land in the recording). Returns interleaved s16 stereo.
 */
export async function playAndRecord(rig: Rig, signal: Signal, sink: 'both' | 'micsink', tailMs: number): Promise<Int16Array> {
  const rec = spawn('parec', ['-d', 'spk.monitor', ...FORMAT, SAFE_LATENCY], { env: rig.env(), stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  const streaming = new Promise<void>((resolve, reject) => {
    rec.stdout.on('data', (b: Buffer) => {
      chunks.push(b);
      resolve();
    });
    rec.on('exit', (code) => reject(new Error(`parec exited (${code}) before recording`)));
  });
  try {
    await streaming;
    await sleep(200);
    await run('pactl', ['play-sample', signal.name, sink], rig.env());
    await sleep(signal.seconds * 1000 + tailMs);
  } finally {
    await stop(rec);
  }
  const bytes = Buffer.concat(chunks);
  return new Int16Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 2 / CHANNELS) * CHANNELS);
}

/** A click train recorded at both ends of the path: the speaker's monitor and the microphone's sink's monitor, each dated on the wall clock. */
export interface ClickRecording {
  speaker: TimedRecording;
  mouth: TimedRecording;
}

/**
 * Plays `signal` into the microphone's sink while recording its monitor (the click as the
 * microphone gets it) and `spk.monitor` (the browser's copy), each dated on its sink's own clock
 * (bench/m2e/dating.ts), so a gap runs from the click playing at `micsink` to its copy playing at
 * `spk`. Until 2026-11-26 the train played into `both` and the gap ran from the direct click in
 * the speaker's recording: with browsers on the sinks the combine sink played its two slaves up
 * to 20 ms apart, one figure per join, and fed `micsink` in irregular blocks that put each click
 * 0–16 ms late into the capture path (docs/BENCHMARKS.md, "Both ends on the
 * devices' own clocks"). `leadMs` of the room is recorded first (a long recording also measures the devices'
 * clock rates better).
 */
export async function recordClicks(rig: Rig, signal: Signal, tailMs: number, leadMs = 200): Promise<ClickRecording> {
  const speaker = await startTimedRecord(rig, 'spk.monitor', 100);
  const mouth = await startTimedRecord(rig, 'micsink.monitor', 100).catch(async (err: unknown) => {
    await speaker.stop();
    throw err;
  });
  let played: unknown = null;
  const latencies: Record<string, number>[] = [];
  try {
    await sleep(leadMs);
    latencies.push(await sinkLatencies(rig));
    await run('pactl', ['play-sample', signal.name, 'micsink'], rig.env());
    await sleep(signal.seconds * 1000 + tailMs);
    latencies.push(await sinkLatencies(rig));
  } catch (err) {
    played = err;
  }
  const result = { speaker: await speaker.stop(), mouth: await mouth.stop() };
  if (played) throw played;
  // The sinks' configured latencies: read before and after the train; a change between the two
  // (a client came or went) leaves the dating to the envelope and says so.
  const [a, b] = latencies;
  for (const [r, sink] of [[result.speaker, 'spk'], [result.mouth, 'micsink']] as const) {
    const before = a?.[sink];
    r.sinkLatencyMs = before !== undefined && before === b?.[sink] ? before : null;
  }
  return result;
}

/** Each sink's configured latency now (`pactl list sinks`), ms, by sink name. */
export async function sinkLatencies(rig: Rig): Promise<Record<string, number>> {
  const text = await run('pactl', ['list', 'sinks'], rig.env());
  const out: Record<string, number> = {};
  for (const block of text.split(/\n(?=Sink #)/)) {
    const name = /Name: (\S+)/.exec(block)?.[1];
    const configured = /Latency: \d+ usec, configured (\d+) usec/.exec(block)?.[1];
    if (name && configured) out[name] = Number(configured) / 1000;
  }
  return out;
}

/**
 * A copy of the microphone into the speaker inside the sound server (module-loopback), no browser:
 * the rig's self-check. A `parec | pacat` pipe does the same on a quiet machine (about 6.7 ms) but
 * under load its pipe keeps whatever piled up while pacat started or underran, and its gap grows
 * by tens of ms within one recording; the server's own loop runs on its real-time thread.
 * Returns a function that unloads it.
 */
export async function startServerLoop(rig: Rig): Promise<() => Promise<void>> {
  const id = (await run('pactl', ['load-module', 'module-loopback', 'source=mic', 'sink=spk', `latency_msec=${LOOP_LATENCY_MS}`, 'adjust_time=0', 'source_dont_move=true', 'sink_dont_move=true'], rig.env())).trim();
  return async () => {
    await run('pactl', ['unload-module', id], rig.env());
  };
}

/** Runs a PulseAudio client to the end; resolves with what it printed. */
function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (b: Buffer) => (out += b.toString()));
    c.stderr.on('data', (b: Buffer) => (err += b.toString()));
    c.on('error', reject);
    c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.trim()}`))));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
