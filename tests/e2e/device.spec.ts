// Tutti on a real output device (headed Chromium on the audio rig: PulseAudio null devices under
// Xvfb, tests/support/audio-rig.ts). A room that stays silent must keep the device stream open:
// Chromium moves an AudioContext whose output has been exactly zero for 30 s to a timer-driven
// fake sink and closes the device stream, and the first sound after that plays late by the time
// the device takes to reopen (src/engine/keep-device-awake.ts). Without the rig's programs the
// test skips with the reason, except in CI, where it fails with it (.ci/run installs them).

import { expect, test, type Page } from '@playwright/test';
import { spawn, spawnSync } from 'node:child_process';
import { rigUnavailable, startRig, stop, type Rig } from '../support/audio-rig.ts';
import { joinRoom, launchOnRig, type PeerBrowser } from '../support/browsers.ts';
import { requireTools } from '../support/require-tools.ts';
import { startServer, type RunningServer } from '../support/server.ts';
import { delta, onlyPeer, waitForPeers } from '../support/stats.ts';
import { tonePower } from '../support/wav.ts';

/** Longer than Chromium's 30 s silence timeout, with margin for a slow machine. */
const SILENT_SECONDS = 40;

interface SinkInput {
  application: string;
  corked: boolean;
}

/** The playback streams PulseAudio has open, from `pactl list sink-inputs`. */
function sinkInputs(rig: Rig): SinkInput[] {
  const out = spawnSync('pactl', ['list', 'sink-inputs'], { env: rig.env(), encoding: 'utf8', timeout: 5000 });
  if (out.status !== 0) throw new Error(`pactl list sink-inputs failed: ${out.stderr}`);
  return out.stdout
    .split(/^Sink Input #/m)
    .slice(1)
    .map((block) => ({
      application: /application\.name = "([^"]*)"/.exec(block)?.[1] ?? '',
      corked: /Corked: yes/.test(block),
    }));
}

/** `pactl` on the rig's server; its output (a loaded module's index). */
function pactl(rig: Rig, ...args: string[]): string {
  const out = spawnSync('pactl', args, { env: rig.env(), encoding: 'utf8', timeout: 5000 });
  if (out.status !== 0) throw new Error(`pactl ${args.join(' ')} failed: ${out.stderr}`);
  return out.stdout.trim();
}

/** `ms` of what `source` (a sink's monitor) carries, left channel as floats. */
async function record(rig: Rig, source: string, ms: number): Promise<Float32Array> {
  const rec = spawn('parec', ['-d', source, '--format=s16le', '--rate=48000', '--channels=2', '--latency-msec=50'], { env: rig.env(), stdio: ['ignore', 'pipe', 'ignore'] });
  const chunks: Buffer[] = [];
  rec.stdout.on('data', (b: Buffer) => chunks.push(b));
  await new Promise((r) => setTimeout(r, ms));
  await stop(rec);
  const b = Buffer.concat(chunks);
  const left = new Float32Array(Math.floor(b.length / 4));
  for (let i = 0; i < left.length; i++) left[i] = b.readInt16LE(4 * i) / 32768;
  return left;
}

/** Tone power at 440 and 1000 Hz on `source` over a second and a half (a 0.4-amplitude tone: 0.04). */
async function tones(rig: Rig, source: string): Promise<{ hz440: number; hz1000: number }> {
  const x = await record(rig, source, 1500);
  return { hz440: tonePower(x, 440), hz1000: tonePower(x, 1000) };
}

/** Chooses `label` in the room view's device picker `name` (opening the section first). */
async function choose(page: Page, name: 'input-device' | 'output-device', label: string): Promise<void> {
  const details = page.locator('tutti-devices details');
  if (!(await details.evaluate((d: HTMLDetailsElement) => d.open))) await page.locator('tutti-devices summary').click();
  await expect(page.locator(`select[name="${name}"] option`, { hasText: label })).toHaveCount(1, { timeout: 10_000 });
  await page.locator(`select[name="${name}"]`).selectOption({ label });
}

test.describe('real output device', () => {
  let rig: Rig | null = null;
  let server: RunningServer | null = null;
  let peer: PeerBrowser | null = null;
  let other: PeerBrowser | null = null;

  test.afterEach(async () => {
    await peer?.close();
    await other?.close();
    await server?.close();
    await rig?.close();
    peer = other = server = rig = null;
  });

  test('devices, live: the receiver moves its output and the sender its input mid-session; an output that disappears falls back with a notice', async () => {
    requireTools(test, 'real audio device (PulseAudio and Xvfb)', rigUnavailable());
    test.setTimeout(150_000);
    rig = await startRig(() => {});
    // Two microphones that hear known tones, each with a name the browser lists: a sine played
    // into a null sink (module-sine) whose monitor is remapped as a source, like the rig's `mic`.
    // (PulseAudio's module-sine-source delivers in blocks of seconds: a sender on it stuttered.)
    for (const hz of [440, 1000]) {
      pactl(rig, 'load-module', 'module-null-sink', `sink_name=tonesink${hz}`, 'rate=48000', `sink_properties=device.description=Tone-${hz}-sink`);
      pactl(rig, 'load-module', 'module-remap-source', `master=tonesink${hz}.monitor`, `source_name=tone${hz}`, `source_properties=device.description=Tone-${hz}`);
      pactl(rig, 'load-module', 'module-sine', `sink=tonesink${hz}`, `frequency=${hz}`);
    }
    const spk2 = pactl(rig, 'load-module', 'module-null-sink', 'sink_name=spk2', 'rate=48000', 'sink_properties=device.description=Speaker-2');
    server = await startServer();
    const room = `devices-${Date.now()}`;
    other = await launchOnRig(rig, { sink: 'silent', source: 'tone440' }); // the sender
    peer = await launchOnRig(rig, { sink: 'spk', source: 'silent.monitor' }); // the listener
    await joinRoom(other.page, server.url, room, 'Sender', { query: '' });
    await joinRoom(peer.page, server.url, room, 'Listener', { query: '' });
    await waitForPeers(peer.page, 1);
    await peer.page.waitForTimeout(2000);

    const onSpk = await tones(rig, 'spk.monitor');
    console.log(`default output: spk ${JSON.stringify(onSpk)}`);
    expect(onSpk.hz440, 'the sender\'s 440 Hz on the default speaker').toBeGreaterThan(0.005);

    // The listener moves its output to Speaker-2, in the room.
    await choose(peer.page, 'output-device', 'Speaker-2');
    await peer.page.waitForTimeout(1000);
    const moved = { spk: await tones(rig, 'spk.monitor'), spk2: await tones(rig, 'spk2.monitor') };
    console.log(`output on Speaker-2: ${JSON.stringify(moved)}`);
    expect(moved.spk2.hz440, 'the tone now plays on Speaker-2').toBeGreaterThan(0.005);
    expect(moved.spk.hz440, 'and no longer on the default speaker').toBeLessThan(moved.spk2.hz440 / 100);

    // The sender moves its input to the 1000 Hz microphone: the same stream goes on, now 1000 Hz.
    const before = await onlyPeer(peer.page);
    await choose(other.page, 'input-device', 'Tone-1000');
    await peer.page.waitForTimeout(1500);
    const after = await onlyPeer(peer.page);
    const input = await tones(rig, 'spk2.monitor');
    console.log(`sender on Tone-1000: ${JSON.stringify(input)}; at the listener over the switch: ${JSON.stringify(delta(before, after))}`);
    expect(input.hz1000, 'the new input is heard').toBeGreaterThan(0.005);
    expect(input.hz440, 'the old one is not').toBeLessThan(input.hz1000 / 100);
    expect(delta(before, after).resyncs, 'the sender\'s stream went on: no new timeline at the listener').toBe(0);
    // The sender reads its old microphone until the new one delivers: no gap at the listener (a
    // first version stopped the old one first: 164 and 321 underruns, ~0.4 and 0.9 s).
    expect(delta(before, after).underruns, 'underruns at the listener over the switch').toBeLessThan(40);

    // Speaker-2 disappears (its module unloaded): the listener falls back to the default, says so,
    // and stays in the room.
    pactl(rig, 'unload-module', spk2);
    await expect(peer.page.getByTestId('device-notice')).toContainText('Speaker-2', { timeout: 10_000 });
    await expect(peer.page.getByTestId('device-notice')).toContainText('disconnected');
    await peer.page.waitForTimeout(1000);
    const back = await tones(rig, 'spk.monitor');
    console.log(`after Speaker-2 went away: spk ${JSON.stringify(back)}`);
    expect(back.hz1000, 'the default speaker plays again').toBeGreaterThan(0.005);
    await expect(peer.page.locator('tutti-peer-strip')).toContainText('Sender');

    // The choice is remembered on this computer: the sender leaves, and its next join opens
    // Tone-1000 (the browser's default input is still Tone-440).
    expect(await other.page.evaluate(() => localStorage.getItem('tutti.devices'))).toContain('Tone-1000');
    await other.page.getByRole('button', { name: 'Leave' }).click();
    await joinRoom(other.page, server.url, room, 'Sender', { query: '' });
    await expect(other.page.locator('tutti-devices summary')).toContainText('Tone-1000', { timeout: 10_000 });
    await waitForPeers(peer.page, 1);
    await peer.page.waitForTimeout(1500);
    const rejoined = await tones(rig, 'spk.monitor');
    console.log(`sender rejoined: spk ${JSON.stringify(rejoined)}`);
    expect(rejoined.hz1000, 'the remembered input is in use after a new join').toBeGreaterThan(0.005);
    expect(rejoined.hz440).toBeLessThan(rejoined.hz1000 / 100);
  });

  test('a silent room keeps the output device stream open past the browser silence timeout', async () => {
    requireTools(test, 'real audio device (PulseAudio and Xvfb)', rigUnavailable());
    test.setTimeout(120_000);
    rig = await startRig(() => {});
    server = await startServer();
    // A silent microphone and nobody else in the room: the output is silence all along.
    peer = await launchOnRig(rig, { sink: 'spk', source: 'silent.monitor' });
    await joinRoom(peer.page, server.url, `device-${Date.now()}`, 'Alone', { query: '' });

    const seen: string[] = [];
    for (let s = 0; s <= SILENT_SECONDS; s += 5) {
      const playing = sinkInputs(rig).filter((i) => i.application === 'Chromium' && !i.corked);
      seen.push(`${s} s: ${playing.length}`);
      expect(playing.length, `Chromium playback streams open on the device, by second of silence: ${seen.join(', ')}`).toBeGreaterThan(0);
      if (s < SILENT_SECONDS) await peer.page.waitForTimeout(5000);
    }
  });
});
