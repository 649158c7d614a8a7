// The live app server's signaling hub under malformed input, over real WebSockets (no browser):
// each bad client is dropped or closed with its own code while a healthy pair of clients in
// another topic keeps relaying, and the server keeps answering /healthz.

import { expect, test } from '@playwright/test';
import { WebSocket } from 'ws';
import { CloseCode } from '../../src/shared/signaling-protocol.ts';
import { startServer, type RunningServer } from '../support/server.ts';

let server: RunningServer;
let wsUrl: string;
const PING_TIMEOUT_MS = 2000;

test.beforeAll(async () => {
  // A short liveness timeout so the dead-socket case finishes quickly; every other limit is the default.
  server = await startServer({ signaling: { pingTimeoutMs: PING_TIMEOUT_MS } });
  wsUrl = server.url.replace('http', 'ws') + '/signal';
});
test.afterAll(async () => {
  await server?.close();
});

interface Client {
  ws: WebSocket;
  received: unknown[];
  closed: Promise<{ code: number; reason: string }>;
}

async function connect(opts: { autoPong?: boolean } = {}): Promise<Client> {
  const ws = new WebSocket(wsUrl, { autoPong: opts.autoPong ?? true });
  const received: unknown[] = [];
  ws.on('message', (d) => received.push(JSON.parse(d.toString())));
  ws.on('error', () => {});
  const closed = new Promise<{ code: number; reason: string }>((r) => ws.on('close', (code, reason) => r({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, received, closed };
}

/** The healthy pair still relays: B receives what A publishes in their topic, with a fresh nonce. */
async function assertHealthyRelay(a: Client, b: Client): Promise<void> {
  const nonce = Math.random().toString(36).slice(2);
  a.ws.send(JSON.stringify({ type: 'publish', topic: 'healthy', data: { nonce } }));
  await expect.poll(() => b.received.some((m) => (m as { data?: { nonce?: string } }).data?.nonce === nonce), { timeout: 5000 }).toBe(true);
  const health = (await (await fetch(`${server.url}/healthz`)).json()) as { ok: boolean };
  expect(health.ok).toBe(true);
}

test('malformed input closes or drops only the offender; a healthy pair keeps relaying', async () => {
  const a = await connect();
  const b = await connect();
  for (const c of [a, b]) c.ws.send(JSON.stringify({ type: 'subscribe', topics: ['healthy'] }));
  // A pong after the subscribe means the server has processed it (frames on one socket keep order).
  for (const c of [a, b]) c.ws.send(JSON.stringify({ type: 'ping' }));
  await expect.poll(() => [a, b].every((c) => c.received.some((m) => (m as { type?: string }).type === 'pong')), { timeout: 5000 }).toBe(true);
  await assertHealthyRelay(a, b);
  const counters = async () => ((await (await fetch(`${server.url}/healthz`)).json()) as { signaling: { dropped: number; closedForAbuse: number; sockets: number } }).signaling;

  // Invalid JSON, non-objects and unknown types are dropped; the socket stays open and usable.
  const junk = await connect();
  const before = (await counters()).dropped;
  for (const frame of ['{not json', '', '42', '"a string"', 'null', '[1,2,3]', 'true', JSON.stringify({ type: 'nope' }), JSON.stringify({ no: 'type' }), JSON.stringify({ type: 'publish', topic: 7 }), JSON.stringify({ type: 'subscribe', topics: 'x' })]) {
    junk.ws.send(frame);
  }
  junk.ws.send(Buffer.from([0xff, 0xfe, 0x00, 0x01]), { binary: true });
  junk.ws.send(JSON.stringify({ type: 'ping' }));
  await expect.poll(() => junk.received.some((m) => (m as { type?: string }).type === 'pong'), { timeout: 5000 }).toBe(true);
  expect(junk.ws.readyState).toBe(WebSocket.OPEN);
  expect((await counters()).dropped - before).toBeGreaterThanOrEqual(12);
  await assertHealthyRelay(a, b);

  // Oversized frame (over 64 KiB): closed with 1009.
  const big = await connect();
  big.ws.send(JSON.stringify({ type: 'publish', topic: 'healthy', data: 'x'.repeat(70 * 1024) }));
  expect((await big.closed).code).toBe(CloseCode.MESSAGE_TOO_BIG);
  expect(b.received.some((m) => typeof (m as { data?: unknown }).data === 'string' && ((m as { data: string }).data.length > 60_000))).toBe(false);
  await assertHealthyRelay(a, b);

  // Too many topics: closed with 4001.
  const greedy = await connect();
  greedy.ws.send(JSON.stringify({ type: 'subscribe', topics: Array.from({ length: 40 }, (_, i) => `t${i}`) }));
  expect((await greedy.closed).code).toBe(CloseCode.TOO_MANY_TOPICS);
  await assertHealthyRelay(a, b);

  // Flood: far over the per-socket rate limit: closed with 4002; the healthy topic sees none of it.
  const flood = await connect();
  const flooded = b.received.length;
  for (let i = 0; i < 2000 && flood.ws.readyState === WebSocket.OPEN; i++) flood.ws.send(JSON.stringify({ type: 'publish', topic: 'flood-only', data: i }));
  expect((await flood.closed).code).toBe(CloseCode.RATE_LIMITED);
  expect(b.received.length).toBe(flooded);
  await assertHealthyRelay(a, b);

  // Dead socket: answers no ping and sends nothing: closed by the liveness sweep (4003, or an
  // abrupt 1006 if the terminate beats the close frame), and no longer counted.
  const dead = await connect({ autoPong: false });
  const socketsWithDead = (await counters()).sockets;
  const deadClose = await dead.closed;
  console.log(`dead socket closed with ${deadClose.code}`);
  expect([CloseCode.PING_TIMEOUT, 1006]).toContain(deadClose.code);
  await expect.poll(async () => (await counters()).sockets, { timeout: 5000 }).toBeLessThan(socketsWithDead);
  await assertHealthyRelay(a, b);

  // The healthy pair answered the liveness pings automatically and is still open after the sweeps.
  expect(a.ws.readyState).toBe(WebSocket.OPEN);
  expect(b.ws.readyState).toBe(WebSocket.OPEN);
  expect((await counters()).closedForAbuse).toBe(2); // 4001 and 4002 (1009 is ws's own, 4003 is liveness)
  for (const c of [a, b, junk]) c.ws.close();
});
