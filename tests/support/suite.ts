// The setup shared by the specs that put two people in a room: one real server for the spec file,
// two stereo tone WAVs to feed as microphones, and peer browsers closed after each test.

import { test } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchPeer, type PeerBrowser } from './browsers.ts';
import { startServer, type Build, type RunningServer } from './server.ts';
import { writeToneWav } from './wav.ts';

/** Where specs write their scratch files (WAVs, screenshots); kept between runs. */
export const TEST_TMP = join(import.meta.dirname, '..', '.tmp');

export interface RoomSuite {
  /** The real server (`npm start`'s) with the suite's build(s), started before the file's first test. */
  readonly server: RunningServer;
  /** Microphone files: `a` is 440 Hz left / 660 Hz right, `b` 1000 / 1250 Hz, 5 s each (looped). */
  readonly wav: { readonly a: string; readonly b: string };
  /** A separate Chromium process for one person; closed after the test. */
  launch(opts?: Parameters<typeof launchPeer>[0]): Promise<PeerBrowser>;
}

/**
 * Registers the file's hooks (call at the top level of a spec). `name` keeps the WAVs of specs
 * that run at once apart. `build`: production (default) unless the spec reads taps or sets test
 * switches (server.ts).
 */
export function roomSuite(name: string, opts: { build?: Build | readonly Build[] } = {}): RoomSuite {
  let server: RunningServer | undefined;
  const wav = { a: '', b: '' };
  const peers: PeerBrowser[] = [];
  test.beforeAll(async () => {
    mkdirSync(TEST_TMP, { recursive: true });
    wav.a = writeToneWav(join(TEST_TMP, `${name}-a.wav`), { leftHz: 440, rightHz: 660, seconds: 5 });
    wav.b = writeToneWav(join(TEST_TMP, `${name}-b.wav`), { leftHz: 1000, rightHz: 1250, seconds: 5 });
    server = await startServer(opts.build ? { build: opts.build } : {});
  });
  test.afterAll(async () => {
    await server?.close();
  });
  test.afterEach(async () => {
    await Promise.all(peers.splice(0).map((p) => p.close()));
  });
  return {
    get server(): RunningServer {
      if (!server) throw new Error('roomSuite: the server is started in beforeAll; use it inside a test');
      return server;
    },
    wav,
    async launch(opts = {}) {
      const p = await launchPeer(opts);
      peers.push(p);
      return p;
    },
  };
}
