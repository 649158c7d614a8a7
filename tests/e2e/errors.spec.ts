// What a person sees when audio cannot start: each failure gets a clear, actionable message and
// the join form stays usable (nothing typed is lost).

import { expect, test } from '@playwright/test';
import { createServer, type Server } from 'node:http';
import { joinRoom, launchPeer } from '../support/browsers.ts';
import { startServer, type RunningServer } from '../support/server.ts';

let server: RunningServer;
test.beforeAll(async () => {
  server = await startServer();
});
test.afterAll(async () => {
  await server?.close();
});

async function tryJoin(args: { omitArgs?: string[] }, baseUrl: string): Promise<{ error: string; room: string; name: string }> {
  const peer = await launchPeer(args);
  try {
    const page = peer.page;
    await page.goto(baseUrl);
    await page.getByRole('textbox', { name: 'Your name' }).fill('Dana');
    await page.getByRole('textbox', { name: 'Room' }).fill('errors');
    await page.getByRole('button', { name: 'Join' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor({ timeout: 15_000 });
    return {
      error: (await alert.textContent()) ?? '',
      room: await page.getByRole('textbox', { name: 'Room' }).inputValue(),
      name: await page.getByRole('textbox', { name: 'Your name' }).inputValue(),
    };
  } finally {
    await peer.close();
  }
}

test('microphone denied: says so and how to allow it', async () => {
  const r = await tryJoin({ omitArgs: ['--use-fake-ui-for-media-stream'] }, server.url);
  expect(r.error).toMatch(/Microphone access was denied.*Allow the microphone/);
  expect(r).toMatchObject({ room: 'errors', name: 'Dana' });
});

test('no input device: says to plug one in', async () => {
  // Without the fake device this machine has no capture device at all.
  const r = await tryJoin({ omitArgs: ['--use-fake-device-for-media-stream'] }, server.url);
  expect(r.error).toMatch(/No audio input device|audio input is in use|Could not open the audio input/);
  expect(r).toMatchObject({ room: 'errors', name: 'Dana' });
});

test('page not cross-origin isolated: explains the missing headers', async () => {
  // A proxy in front of the real server that strips COOP/COEP, like a misconfigured host.
  const proxy: Server = createServer(async (req, res) => {
    const upstream = await fetch(server.url + (req.url ?? '/'));
    upstream.headers.forEach((v, k) => {
      if (!/^cross-origin-(opener|embedder)-policy$/i.test(k) && k !== 'content-encoding' && k !== 'content-length') res.setHeader(k, v);
    });
    res.statusCode = upstream.status;
    res.end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const addr = proxy.address();
  try {
    const r = await tryJoin({}, `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`);
    expect(r.error).toMatch(/not cross-origin isolated/);
    expect(r).toMatchObject({ room: 'errors', name: 'Dana' });
  } finally {
    proxy.close();
  }
});

test('a joined page is cross-origin isolated and the server answers health checks', async () => {
  const peer = await launchPeer();
  try {
    await joinRoom(peer.page, server.url, 'health', 'Eve');
    expect(await peer.page.evaluate(() => crossOriginIsolated)).toBe(true);
    const health = (await (await fetch(`${server.url}/healthz`)).json()) as { ok: boolean; signaling: { sockets: number } };
    expect(health.ok).toBe(true);
    expect(health.signaling.sockets).toBeGreaterThanOrEqual(1);
  } finally {
    await peer.close();
  }
});
