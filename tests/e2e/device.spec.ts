// Tutti on a real output device (headed Chromium on the audio rig: PulseAudio null devices under
// Xvfb, tests/support/audio-rig.ts). A room that stays silent must keep the device stream open:
// Chromium moves an AudioContext whose output has been exactly zero for 30 s to a timer-driven
// fake sink and closes the device stream, and the first sound after that plays late by the time
// the device takes to reopen (src/engine/keep-device-awake.ts). Without the rig's programs the
// test skips with the reason, except in CI, where it fails with it (.ci/run installs them).

import { expect, test, type Page } from '@playwright/test';
import { spawn, spawnSync } from 'node:child_process';
import { INPUT_CHANNEL_LABELS } from '../../src/shared/input-channels.ts';
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

/** `ms` of what `source` carries, both channels as floats. */
async function recordStereo(rig: Rig, source: string, ms: number): Promise<[Float32Array, Float32Array]> {
  const rec = spawn('parec', ['-d', source, '--format=s16le', '--rate=48000', '--channels=2', '--latency-msec=50'], { env: rig.env(), stdio: ['ignore', 'pipe', 'ignore'] });
  const chunks: Buffer[] = [];
  rec.stdout.on('data', (b: Buffer) => chunks.push(b));
  await new Promise((r) => setTimeout(r, ms));
  await stop(rec);
  const b = Buffer.concat(chunks);
  const n = Math.floor(b.length / 4);
  const left = new Float32Array(n);
  const right = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    left[i] = b.readInt16LE(4 * i) / 32768;
    right[i] = b.readInt16LE(4 * i + 2) / 32768;
  }
  return [left, right];
}

/** `ms` of what `source` (a sink's monitor) carries, left channel as floats. */
async function record(rig: Rig, source: string, ms: number): Promise<Float32Array> {
  return (await recordStereo(rig, source, ms))[0];
}

/** Which tone each channel of `source` carries over a second and a half: '440', '1000', or '?' (neither clearly). */
async function toneSides(rig: Rig, source: string): Promise<{ left: string; right: string; powers: number[] }> {
  const [l, r] = await recordStereo(rig, source, 1500);
  const powers = [tonePower(l, 440), tonePower(l, 1000), tonePower(r, 440), tonePower(r, 1000)].map((p) => Math.round(p * 1e4) / 1e4);
  const side = (p440: number, p1000: number) => (p440 > 0.005 && p1000 < p440 / 100 ? '440' : p1000 > 0.005 && p440 < p1000 / 100 ? '1000' : '?');
  return { left: side(powers[0]!, powers[1]!), right: side(powers[2]!, powers[3]!), powers };
}

/** Tone power at 440 and 1000 Hz on `source` over a second and a half (a 0.4-amplitude tone: 0.04). */
async function tones(rig: Rig, source: string): Promise<{ hz440: number; hz1000: number }> {
  const x = await record(rig, source, 1500);
  return { hz440: tonePower(x, 440), hz1000: tonePower(x, 1000) };
}

/** Chooses `label` in the room view's device picker `name` (opening the section first). */
async function choose(page: Page, name: 'input-device' | 'output-device' | 'input-channels', label: string): Promise<void> {
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

  /**
   * Our server; a sender (`other`) whose default input is `source` and a listener (`peer`) on
   * `spk`, both in `room`. Each is handed back as soon as it exists, so afterEach closes it.
   */
  async function senderAndListener(r: Rig, source: string, room: string): Promise<{ server: RunningServer; other: PeerBrowser; peer: PeerBrowser }> {
    const srv = (server = await startServer());
    const sender = (other = await launchOnRig(r, { sink: 'silent', source }));
    const listener = (peer = await launchOnRig(r, { sink: 'spk', source: 'silent.monitor' }));
    await joinRoom(sender.page, srv.url, room, 'Sender', { query: '' });
    await joinRoom(listener.page, srv.url, room, 'Listener', { query: '' });
    await waitForPeers(listener.page, 1);
    await listener.page.waitForTimeout(2000);
    return { server: srv, other: sender, peer: listener };
  }

  test.afterEach(async () => {
    await peer?.close();
    await other?.close();
    await server?.close();
    await rig?.close();
    peer = other = server = rig = null;
  });

  test('devices, live: the receiver moves its output and the sender its input mid-session; an output or an input that disappears falls back with a notice', async () => {
    requireTools(test, 'real audio device (PulseAudio and Xvfb)', rigUnavailable());
    test.setTimeout(150_000);
    rig = await startRig(() => {});
    // Two microphones that hear known tones, each with a name the browser lists: a sine played
    // into a null sink (module-sine) whose monitor is remapped as a source, like the rig's `mic`.
    // (PulseAudio's module-sine-source delivers in blocks of seconds: a sender on it stuttered.)
    const toneSource: Record<number, string> = {};
    for (const hz of [440, 1000]) {
      pactl(rig, 'load-module', 'module-null-sink', `sink_name=tonesink${hz}`, 'rate=48000', `sink_properties=device.description=Tone-${hz}-sink`);
      toneSource[hz] = pactl(rig, 'load-module', 'module-remap-source', `master=tonesink${hz}.monitor`, `source_name=tone${hz}`, `source_properties=device.description=Tone-${hz}`);
      pactl(rig, 'load-module', 'module-sine', `sink=tonesink${hz}`, `frequency=${hz}`);
    }
    const spk2 = pactl(rig, 'load-module', 'module-null-sink', 'sink_name=spk2', 'rate=48000', 'sink_properties=device.description=Speaker-2');
    const room = `devices-${Date.now()}`;
    ({ server, other, peer } = await senderAndListener(rig, 'tone440', room));

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

    // The microphone in use is unplugged (its source unloaded): the sender says so, opens the
    // system default (Tone-440) in the room, and the listener hears it.
    pactl(rig, 'unload-module', toneSource[1000]!);
    await expect(other.page.getByTestId('device-notice')).toContainText('Tone-1000', { timeout: 10_000 });
    await expect(other.page.getByTestId('device-notice')).toContainText('system default');
    await expect(other.page.getByTestId('error'), 'no error for what the fallback handled').toHaveCount(0);
    await peer.page.waitForTimeout(1500);
    const unplugged = await tones(rig, 'spk.monitor');
    console.log(`sender's input unplugged: spk ${JSON.stringify(unplugged)}`);
    expect(unplugged.hz440, 'the sender goes on with the default input').toBeGreaterThan(0.005);
    await expect(peer.page.locator('tutti-peer-strip')).toContainText('Sender');
  });

  test('input channels: from a two-channel interface the sender sends channel 1, channel 2 or both, mid-session; the choice is remembered for that input', async () => {
    requireTools(test, 'real audio device (PulseAudio and Xvfb)', rigUnavailable());
    test.setTimeout(150_000);
    rig = await startRig(() => {});
    // A two-input interface: 440 Hz on its channel 1, 1000 Hz on its channel 2. Two one-channel
    // sinks remapped onto the left and right of a stereo null sink, whose monitor is remapped as a
    // stereo source with a name the browser lists.
    pactl(rig, 'load-module', 'module-null-sink', 'sink_name=ifacesink', 'rate=48000', 'channels=2', 'channel_map=front-left,front-right', 'sink_properties=device.description=Interface-sink');
    for (const [side, hz] of [['front-left', 440], ['front-right', 1000]] as const) {
      pactl(rig, 'load-module', 'module-remap-sink', `sink_name=in${hz}`, 'master=ifacesink', 'channels=1', 'channel_map=mono', `master_channel_map=${side}`, 'remix=no', `sink_properties=device.description=Input-${hz}`);
      pactl(rig, 'load-module', 'module-sine', `sink=in${hz}`, `frequency=${hz}`);
    }
    pactl(rig, 'load-module', 'module-remap-source', 'master=ifacesink.monitor', 'source_name=iface', 'channels=2', 'channel_map=front-left,front-right', 'source_properties=device.description=Two-Input-Interface');
    const room = `channels-${Date.now()}`;
    ({ server, other, peer } = await senderAndListener(rig, 'iface', room));
    // The interface as a named choice (not the default), so the choice is remembered for it.
    await choose(other.page, 'input-device', 'Two-Input-Interface');
    await peer.page.waitForTimeout(1500);

    const both = await toneSides(rig, 'spk.monitor');
    console.log(`channels 1 + 2: ${JSON.stringify(both)}`);
    expect([both.left, both.right], 'stereo: channel 1 left, channel 2 right').toEqual(['440', '1000']);

    const before = await onlyPeer(peer.page);
    await choose(other.page, 'input-channels', INPUT_CHANNEL_LABELS.second);
    await peer.page.waitForTimeout(1000);
    const second = await toneSides(rig, 'spk.monitor');
    console.log(`channel 2 only: ${JSON.stringify(second)}`);
    expect([second.left, second.right], 'channel 2 on both sides').toEqual(['1000', '1000']);

    await choose(other.page, 'input-channels', INPUT_CHANNEL_LABELS.first);
    await peer.page.waitForTimeout(1000);
    const first = await toneSides(rig, 'spk.monitor');
    const after = await onlyPeer(peer.page);
    console.log(`channel 1 only: ${JSON.stringify(first)}; at the listener over both switches: ${JSON.stringify(delta(before, after))}`);
    expect([first.left, first.right], 'channel 1 on both sides').toEqual(['440', '440']);
    expect(delta(before, after).resyncs, 'the same stream went on').toBe(0);

    // Remembered for this interface: a new join sends channel 1 only again.
    expect(await other.page.evaluate(() => localStorage.getItem('tutti.devices'))).toContain('"first"');
    await other.page.getByRole('button', { name: 'Leave' }).click();
    await joinRoom(other.page, server.url, room, 'Sender', { query: '' });
    await waitForPeers(peer.page, 1);
    await peer.page.waitForTimeout(2000);
    const rejoined = await toneSides(rig, 'spk.monitor');
    console.log(`sender rejoined: ${JSON.stringify(rejoined)}`);
    expect([rejoined.left, rejoined.right], 'the remembered choice after a new join').toEqual(['440', '440']);
    await other.page.locator('tutti-devices summary').click();
    await expect(other.page.locator('select[name="input-channels"]')).toHaveValue('1');
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
