// Tutti on a real output device (headed Chromium on the audio rig: PulseAudio null devices under
// Xvfb, tests/support/audio-rig.ts). A room that stays silent must keep the device stream open:
// Chromium moves an AudioContext whose output has been exactly zero for 30 s to a timer-driven
// fake sink and closes the device stream, and the first sound after that plays late by the time
// the device takes to reopen (src/engine/keep-device-awake.ts). Without the rig's programs the
// test skips with the reason, except in CI, where it fails with it (.ci/run installs them).

import { expect, test } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import { rigUnavailable, startRig, type Rig } from '../support/audio-rig.ts';
import { joinRoom, launchOnRig, type PeerBrowser } from '../support/browsers.ts';
import { requireTools } from '../support/require-tools.ts';
import { startServer, type RunningServer } from '../support/server.ts';

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

test.describe('real output device', () => {
  let rig: Rig | null = null;
  let server: RunningServer | null = null;
  let peer: PeerBrowser | null = null;

  test.afterEach(async () => {
    await peer?.close();
    await server?.close();
    await rig?.close();
    peer = server = rig = null;
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
