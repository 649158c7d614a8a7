// Signaling hub (server/signaling.ts) end to end over real WebSockets on loopback: y-webrtc's
// protocol (subscribe / unsubscribe / publish / ping), the hardening (malformed and deep frames
// dropped, relays as the sender's bytes, oversized frames, every limit of
// server/signaling-limits.ts, the Origin policy, slow readers, liveness from pongs only, guarded
// handlers) and /healthz. The property-based fuzz is tests/unit/signaling-fuzz.test.ts.
//
// One server for the whole file, with small limits. Every misbehaviour case runs next to a
// healthy "bystander" client in its own topic that must still get its relays afterwards: the
// misbehaving socket is the only one affected and the process is still up.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import type { ClientOptions } from 'ws';
import { createAppServer } from '../../server/http.ts';
import type { AppServer } from '../../server/http.ts';
import type { SignalingCounters, SignalingHealth } from '../../server/signaling.ts';
import { withClients, nestingDepth, parseEnvelope } from '../../server/signaling-envelope.ts';
import { DEFAULT_SIGNALING_LIMITS, type SignalingOptions } from '../../server/signaling-limits.ts';
import { checkOrigin, parseAllowedOrigins } from '../../server/signaling-origin.ts';
import { addressKey } from '../../server/remote-address.ts';
import { readFileSync } from 'node:fs';
import * as lib0ws from 'lib0/websocket';
import { CloseCode, MAX_ROOM_TITLE, parseOpenRooms, type OpenRoom } from '../../src/shared/signaling-protocol.ts';

const GOOD_ORIGIN = 'http://good.example';
const EVIL_ORIGIN = 'http://evil.example';
const LIMITS = {
  maxPayload: 4096,
  maxTopicsPerSocket: 4,
  maxTopicLength: 32,
  rateLimit: 50, // burst = 100
  pingTimeoutMs: 400, // sweep every 200 ms
  allowedOrigins: [GOOD_ORIGIN],
  maxAnnouncedPerSocket: 2,
};

type Msg = Record<string, unknown>;
interface CloseInfo {
  code: number;
  reason: string;
}

let app: AppServer;
let url = '';
let httpBase = '';
const peers = new Set<Peer>();
let topicSeq = 0;

/** A fresh topic name, unique in this file. */
function freshTopic(label: string): string {
  return `t${++topicSeq}-${label}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Poll `pred` until true, or fail after `timeoutMs`. */
async function waitFor(pred: () => boolean, what: string, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

function snap(): SignalingHealth {
  return app.hub.snapshot();
}

/** A WebSocket client with an inbox of parsed server messages. */
class Peer {
  private readonly inbox: Msg[] = [];
  private wake: (() => void) | null = null;
  readonly closed: Promise<CloseInfo>;
  isClosed = false;

  constructor(readonly ws: WebSocket) {
    peers.add(this);
    ws.on('message', (raw, isBinary) => {
      assert.equal(isBinary, false, 'the hub sends text frames only');
      this.inbox.push(JSON.parse(raw.toString()) as Msg);
      this.wake?.();
    });
    ws.on('error', () => {});
    this.closed = new Promise((resolve) =>
      ws.once('close', (code, reason) => {
        this.isClosed = true;
        resolve({ code, reason: reason.toString() });
      }),
    );
  }

  send(msg: unknown): void {
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
  }

  /** The next message from the server. */
  async next(timeoutMs = 1000): Promise<Msg> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = this.inbox.shift();
      if (m !== undefined) return m;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('timed out waiting for a message');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  /**
   * Ping and wait for the pong: the hub handles one socket's frames in order, so everything sent
   * before has been processed. Returns whatever arrived before the pong.
   */
  async sync(): Promise<Msg[]> {
    this.send({ type: 'ping' });
    const before: Msg[] = [];
    for (;;) {
      const m = await this.next();
      if (m['type'] === 'pong') return before;
      before.push(m);
    }
  }

  async subscribe(...topics: string[]): Promise<void> {
    this.send({ type: 'subscribe', topics });
    assert.deepEqual(await this.sync(), []);
  }

  async close(): Promise<void> {
    if (!this.isClosed) this.ws.close();
    await this.closed;
  }

  /** Wait for the server to close this socket; fail if it does not within `timeoutMs`. */
  async closedWithin(timeoutMs: number): Promise<CloseInfo> {
    let t: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      t = setTimeout(() => reject(new Error(`socket not closed within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([this.closed, timeout]);
    } finally {
      clearTimeout(t);
    }
  }
}

function connect(options: ClientOptions = {}, to = url): Promise<Peer> {
  const ws = new WebSocket(to, { origin: GOOD_ORIGIN, ...options });
  const peer = new Peer(ws);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(peer));
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`unexpected response ${res.statusCode}`)));
  });
}

/** Publish `data` to `topic` from `from` and return the relay as `from` received it. */
async function publishEcho(from: Peer, topic: string, data: unknown): Promise<Msg> {
  from.send({ type: 'publish', topic, data });
  const m = await from.next();
  assert.equal(m['type'], 'publish');
  assert.equal(m['topic'], topic);
  return m;
}

/** A healthy client alone in its own topic. */
interface Bystander {
  peer: Peer;
  topic: string;
  /** It still gets its own relays (the hub is up and this room is undisturbed). */
  check(): Promise<void>;
}

async function bystander(): Promise<Bystander> {
  const peer = await connect();
  const topic = freshTopic('bystander');
  await peer.subscribe(topic);
  let n = 0;
  const check = async (): Promise<void> => {
    assert.equal(peer.ws.readyState, WebSocket.OPEN, 'bystander socket still open');
    const data = { check: ++n, text: 'still here' };
    const m = await publishEcho(peer, topic, data);
    assert.deepEqual(m, { type: 'publish', topic, data, clients: 1 });
  };
  await check();
  return { peer, topic, check };
}

/** Open a connection with `origin` (undefined = no Origin header) and report what happened. */
function tryOrigin(origin: string | undefined): Promise<{ opened: boolean; status?: number; error?: string }> {
  const ws = new WebSocket(url, origin === undefined ? {} : { origin });
  return new Promise((resolve) => {
    ws.on('error', (err) => resolve({ opened: false, error: err.message }));
    ws.once('unexpected-response', (req, res) => {
      resolve({ opened: false, status: res.statusCode ?? 0 });
      res.resume();
      req.destroy();
    });
    ws.once('open', () => {
      resolve({ opened: true });
      ws.close();
    });
  });
}

before(async () => {
  app = createAppServer({ root: null, signaling: LIMITS });
  await new Promise<void>((resolve) => app.server.listen(0, '127.0.0.1', resolve));
  const { port } = app.server.address() as AddressInfo;
  url = `ws://127.0.0.1:${port}/`;
  httpBase = `http://127.0.0.1:${port}`;
});

after(async () => {
  for (const p of peers) p.ws.terminate();
  await app.close();
});

describe('signaling hub', () => {
  test('publish reaches every subscriber (sender included) and no one else; ping/pong; unsubscribe', async () => {
    const by = await bystander();
    const a = await connect();
    const b = await connect();
    const c = await connect();
    const room = freshTopic('room');
    const other = freshTopic('other');
    await a.subscribe(room);
    await b.subscribe(room);
    await c.subscribe(other);

    const data = { type: 'tutti-hello', from: 'peer-a', name: 'Ünïcødé 🎻', nested: { list: [1, 2.5, null, 'x'], ok: true } };
    // A client-supplied `clients` must not survive: the hub sets it.
    a.send({ type: 'publish', topic: room, data, clients: 999 });
    const expected = { type: 'publish', topic: room, data, clients: 2 };
    assert.deepEqual(await a.next(), expected, 'sender gets its own publish');
    assert.deepEqual(await b.next(), expected, 'other subscriber gets it');
    // The relay to c (if any) was sent before a's echo; c's pong comes after it.
    assert.deepEqual(await c.sync(), [], 'a client in another topic receives nothing');
    assert.deepEqual(await by.peer.sync(), []);

    // ping → pong
    a.send({ type: 'ping' });
    assert.deepEqual(await a.next(), { type: 'pong' });

    // unsubscribe stops delivery to b; a alone now
    b.send({ type: 'unsubscribe', topics: [room] });
    assert.deepEqual(await b.sync(), []);
    const m = await publishEcho(a, room, 'second');
    assert.deepEqual(m, { type: 'publish', topic: room, data: 'second', clients: 1 });
    assert.deepEqual(await b.sync(), [], 'unsubscribed client receives nothing');

    // Only subscribers publish: b's publish into c's topic is dropped and counted.
    const dropped0 = snap().droppedBy['not-subscribed'];
    b.send({ type: 'publish', topic: other, data: 'to-c' });
    assert.deepEqual(await b.sync(), [], 'a non-subscriber publisher gets no echo');
    assert.deepEqual(await c.sync(), [], 'nor does the topic receive it');
    assert.equal(snap().droppedBy['not-subscribed'] - dropped0, 1);

    await by.check();
    await Promise.all([a.close(), b.close(), c.close(), by.peer.close()]);
  });

  test('malformed frames are dropped; the socket stays usable', async () => {
    const by = await bystander();
    const x = await connect();
    const bad: (string | Buffer)[] = [
      '{not json',
      '[1,2,3]',
      '42',
      'null',
      '{"topics":["a"]}',
      '{"type":"teleport"}',
      '{"type":"subscribe","topics":"not-an-array"}',
      '{"type":"publish","data":{"x":1}}',
      Buffer.from([0xff, 0xfe, 0x00, 0x01]), // binary garbage
    ];
    const dropped0 = snap().dropped;
    for (const frame of bad) x.ws.send(frame);
    assert.deepEqual(await x.sync(), [], 'nothing is answered to a malformed frame');
    assert.equal(x.ws.readyState, WebSocket.OPEN, 'socket stays open');
    assert.equal(snap().dropped - dropped0, bad.length, 'each malformed frame counted as dropped');

    // Still fully usable.
    const topic = freshTopic('after-bad');
    await x.subscribe(topic);
    const m = await publishEcho(x, topic, { fine: true });
    assert.deepEqual(m, { type: 'publish', topic, data: { fine: true }, clients: 1 });

    await by.check();
    await Promise.all([x.close(), by.peer.close()]);
  });

  test('over-long and empty topic names are ignored', async () => {
    const x = await connect();
    const ok = freshTopic('ok');
    const long = 'L'.repeat(LIMITS.maxTopicLength + 1);
    const topics0 = snap().topics;
    // 4 ignored names + 1 valid one: within the limit of 4 because ignored names do not count.
    await x.subscribe('', long, long + '2', long + '3', ok);
    assert.equal(snap().topics - topics0, 1);
    x.send({ type: 'publish', topic: long, data: 1 });
    assert.deepEqual(await x.sync(), [], 'no topic was created for the over-long name');
    await x.close();
  });

  test(`a frame over maxPayload closes that socket with ${CloseCode.MESSAGE_TOO_BIG}`, async () => {
    const by = await bystander();
    const x = await connect();
    const topic = freshTopic('big');
    await x.subscribe(topic);
    const sockets0 = snap().sockets;
    x.send({ type: 'publish', topic, data: 'x'.repeat(LIMITS.maxPayload + 100) });
    const info = await x.closedWithin(2000);
    assert.equal(info.code, CloseCode.MESSAGE_TOO_BIG);
    await waitFor(() => snap().sockets === sockets0 - 1, 'server to drop the socket');
    await by.check();
    await by.peer.close();
  });

  test(`more than maxTopicsPerSocket topics closes with ${CloseCode.TOO_MANY_TOPICS}`, async () => {
    const by = await bystander();
    const x = await connect();
    const before = snap();
    const topics = Array.from({ length: LIMITS.maxTopicsPerSocket + 1 }, (_, i) => freshTopic(`many${i}`));
    // Exactly the limit is fine.
    await x.subscribe(...topics.slice(0, LIMITS.maxTopicsPerSocket));
    assert.equal(snap().topics - before.topics, LIMITS.maxTopicsPerSocket);
    // One more is not.
    x.send({ type: 'subscribe', topics: topics.slice(LIMITS.maxTopicsPerSocket) });
    const info = await x.closedWithin(2000);
    assert.equal(info.code, CloseCode.TOO_MANY_TOPICS);
    await waitFor(() => snap().sockets === before.sockets - 1, 'server to drop the socket');
    assert.equal(snap().topics, before.topics, "the closed socket's topics are gone");
    assert.equal(snap().closedForAbuse - before.closedForAbuse, 1);
    await by.check();
    await by.peer.close();
  });

  test(`a flood beyond the rate limit closes with ${CloseCode.RATE_LIMITED}`, async () => {
    const by = await bystander();
    const x = await connect();
    const sockets0 = snap().sockets;
    const burst = LIMITS.rateLimit * 2;
    for (let i = 0; i < burst + 50; i++) x.send({ type: 'ping' });
    const info = await x.closedWithin(2000);
    assert.equal(info.code, CloseCode.RATE_LIMITED);
    let pongs = 0;
    for (;;) {
      const m = await x.next(50).catch(() => null);
      if (m === null) break;
      assert.deepEqual(m, { type: 'pong' });
      pongs++;
    }
    assert.ok(pongs >= burst && pongs <= burst + 5, `about one burst of pongs before the close (got ${pongs})`);
    await waitFor(() => snap().sockets === sockets0 - 1, 'server to drop the socket');
    await by.check();
    await by.peer.close();
  });

  test("Origin: the page's own, localhost and the allow-list connect; other pages get 403", async () => {
    const by = await bystander();
    const sockets0 = snap().sockets;
    const refused0 = snap().refused.origin;
    for (const origin of [EVIL_ORIGIN, 'null', 'not a url', 'http://127.0.0.1.evil.example', `http://evil.example:${new URL(url).port}`]) {
      const evil = await tryOrigin(origin);
      assert.equal(evil.opened, false, `${origin} must not connect`);
      assert.equal(evil.status, 403, origin);
    }
    assert.equal(snap().refused.origin - refused0, 5);
    // No Origin header: not a browser, so not a page the check could stop (PROTOCOL.md §3.3).
    for (const origin of [undefined, GOOD_ORIGIN, `http://127.0.0.1:${new URL(url).port}`, 'http://localhost:5173', 'https://[::1]:1', 'http://127.0.0.1']) {
      assert.equal((await tryOrigin(origin)).opened, true, `${origin} connects`);
    }
    await waitFor(() => snap().sockets === sockets0, 'accepted test sockets to close');
    await by.check();
    await by.peer.close();
  });

  test('a socket that answers no pings is closed by the sweep', async () => {
    const by = await bystander();
    const dead = new Peer(new WebSocket(url, { origin: GOOD_ORIGIN, autoPong: false }));
    // Counted from the start: a sweep that falls just after the upgrade sends its ping in the same
    // read as the 101 response, and ws emits it before an `await` on 'open' could resume.
    let pingsSeen = 0;
    dead.ws.on('ping', () => pingsSeen++);
    await new Promise<void>((resolve, reject) => {
      dead.ws.once('open', () => resolve());
      dead.ws.once('error', reject);
    });
    const topic = freshTopic('dead');
    await dead.subscribe(topic);
    const withDead = snap();
    const t0 = Date.now();
    // Sweep every pingTimeoutMs/2: at most ~2–3 sweeps (≤ 600 ms) before it goes; allow slack.
    await dead.closedWithin(LIMITS.pingTimeoutMs * 4);
    const elapsed = Date.now() - t0;
    assert.ok(pingsSeen >= 1, 'the hub pinged the silent socket');
    assert.ok(elapsed <= LIMITS.pingTimeoutMs * 4, `closed after ${elapsed} ms`);
    await waitFor(() => snap().sockets === withDead.sockets - 1, 'sockets to drop');
    assert.equal(snap().topics, withDead.topics - 1, "the dead socket's topic is gone");
    // The bystander idled through several sweeps and survived on its automatic pongs.
    await sleep(LIMITS.pingTimeoutMs * 1.5);
    await by.check();
    await by.peer.close();
  });

  test('/healthz reports the hub counters', async () => {
    const base = snap();
    const a = await connect();
    const b = await connect();
    const shared = freshTopic('health-shared');
    const solo = freshTopic('health-solo');
    await a.subscribe(shared);
    await b.subscribe(shared, solo);

    const res = await fetch(`${httpBase}/healthz`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.headers.get('cross-origin-opener-policy'), 'same-origin');
    const body = (await res.json()) as { ok: unknown; signaling: SignalingCounters };
    assert.equal(body.ok, true);
    assert.equal(body.signaling.sockets, base.sockets + 2);
    assert.equal(body.signaling.topics, base.topics + 2);
    assert.deepEqual(body.signaling, snap());
    for (const k of ['messages', 'dropped', 'closedForAbuse'] as const) assert.equal(typeof body.signaling[k], 'number');

    await Promise.all([a.close(), b.close()]);
    await waitFor(() => snap().sockets === base.sockets, 'sockets to drop');
    const after = (await (await fetch(`${httpBase}/healthz`)).json()) as { signaling: SignalingCounters };
    assert.equal(after.signaling.sockets, base.sockets);
    assert.equal(after.signaling.topics, base.topics);
  });

  // Frames already in flight when the hub closes a socket for abuse are still handled by
  // onMessage (ws emits 'message' while CLOSING), after abuse() has already dropped the client.
  describe('frames that arrive after an abuse close', () => {
    test('do not re-subscribe the dropped client (no leaked subscription)', async () => {
      const by = await bystander();
      const y = await connect();
      const leak = freshTopic('leak');
      await y.subscribe(leak);
      const before = snap();
      const x = await connect();
      const many = Array.from({ length: LIMITS.maxTopicsPerSocket + 1 }, (_, i) => freshTopic(`over${i}`));
      // Sent back to back: the second frame is in flight when the first gets x closed.
      x.send({ type: 'subscribe', topics: many });
      x.send({ type: 'subscribe', topics: [leak, freshTopic('orphan')] });
      const info = await x.closedWithin(2000);
      assert.equal(info.code, CloseCode.TOO_MANY_TOPICS);
      await waitFor(() => snap().sockets === before.sockets, 'server to drop x');
      // y is alone in `leak` again: the relay must count 1 subscriber.
      const m = await publishEcho(y, leak, 'who is here');
      // Expected: y is the only subscriber left, and no topic outlives x.
      assert.deepEqual(
        { subscribersOfSharedTopic: m['clients'], extraTopics: snap().topics - before.topics },
        { subscribersOfSharedTopic: 1, extraTopics: 0 },
        'subscriptions made by frames processed after the abuse close leaked',
      );
      await by.check();
      await Promise.all([y.close(), by.peer.close()]);
    });

    test('count one closedForAbuse per closed socket', async () => {
      const x = await connect();
      const before = snap();
      for (let i = 0; i < LIMITS.rateLimit * 2 + 50; i++) x.send({ type: 'ping' });
      const info = await x.closedWithin(2000);
      assert.equal(info.code, CloseCode.RATE_LIMITED);
      await waitFor(() => snap().sockets === before.sockets - 1, 'server to drop x');
      assert.equal(snap().closedForAbuse - before.closedForAbuse, 1);
    });
  });

  describe('open-rooms list (tutti-announce, GET /rooms)', () => {
    async function list(base = httpBase): Promise<{ enabled: boolean; rooms: OpenRoom[] }> {
      const res = await fetch(`${base}/rooms`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const body = (await res.json()) as { enabled: boolean };
      return { enabled: body.enabled, rooms: parseOpenRooms(body) };
    }
    const entry = async (room: string, base = httpBase) => (await list(base)).rooms.find((r) => r.room === room);

    test('a member lists its room; it stays while someone who listed it is subscribed', async () => {
      const room = freshTopic('open');
      const a = await connect();
      const b = await connect();
      await a.subscribe(room);
      a.send({ type: 'tutti-announce', topic: room, title: 'Friday jam', locked: false });
      assert.deepEqual(await a.sync(), []);
      assert.deepEqual(await entry(room), { room, title: 'Friday jam', locked: false, connected: 1 });
      assert.equal(snap().openRooms, (await list()).rooms.length);

      // A second member: counted, and its announcement's title (the newest) is shown.
      await b.subscribe(room);
      b.send({ type: 'tutti-announce', topic: room, title: 'Friday jam (locked now)', locked: true });
      await b.sync();
      assert.deepEqual(await entry(room), { room, title: 'Friday jam (locked now)', locked: true, connected: 2 });

      // b withdraws: a's listing remains. a leaves the topic: gone.
      b.send({ type: 'tutti-unannounce', topic: room });
      await b.sync();
      assert.deepEqual(await entry(room), { room, title: 'Friday jam', locked: false, connected: 2 });
      a.send({ type: 'unsubscribe', topics: [room] });
      await a.sync();
      assert.equal(await entry(room), undefined);

      // Listed again by b, then b's socket goes away: gone, nothing left behind.
      b.send({ type: 'tutti-announce', topic: room, title: 'again', locked: false });
      await b.sync();
      assert.equal((await entry(room))?.title, 'again');
      await b.close();
      await waitFor(() => app.hub.openRooms().every((r) => r.room !== room), 'the listing to go with the socket');
      await a.close();
    });

    test('bad announcements are dropped and counted; the socket stays usable', async () => {
      const by = await bystander();
      const x = await connect();
      const mine = freshTopic('mine');
      const other = freshTopic('other');
      await x.subscribe(mine);
      const before = snap();
      x.send({ type: 'tutti-announce', topic: other, title: 'not a member', locked: false });
      x.send({ type: 'tutti-announce', topic: mine, title: 42, locked: false });
      x.send({ type: 'tutti-announce', topic: mine, title: 'no lock flag' });
      x.send({ type: 'tutti-announce', title: 'no topic', locked: false });
      x.send({ type: 'tutti-unannounce', topic: 7 });
      assert.deepEqual(await x.sync(), []);
      assert.equal(snap().dropped - before.dropped, 5);
      assert.equal(await entry(other), undefined);
      assert.equal(await entry(mine), undefined);

      // Titles are cleaned: control characters out, whitespace collapsed, cut to MAX_ROOM_TITLE;
      // an empty one shows the room's name.
      x.send({ type: 'tutti-announce', topic: mine, title: `  Scales\n\u0007and   arpeggios ${'x'.repeat(100)}`, locked: false });
      await x.sync();
      const e = await entry(mine);
      assert.equal(e?.title.length, MAX_ROOM_TITLE);
      assert.ok(e?.title.startsWith('Scales and arpeggios xxx'), e?.title);
      x.send({ type: 'tutti-announce', topic: mine, title: ' \t ', locked: false });
      await x.sync();
      assert.equal((await entry(mine))?.title, mine);

      // One socket lists at most maxAnnouncedPerSocket rooms.
      const t2 = freshTopic('two');
      const t3 = freshTopic('three');
      await x.subscribe(t2, t3);
      const mid = snap();
      for (const t of [t2, t3]) x.send({ type: 'tutti-announce', topic: t, title: t, locked: false });
      await x.sync();
      assert.equal(snap().dropped - mid.dropped, 1);
      assert.ok(await entry(t2));
      assert.equal(await entry(t3), undefined);
      await by.check();
      await Promise.all([x.close(), by.peer.close()]);
    });

    test('a server with the list turned off, and one with a full list, drop announcements', async () => {
      for (const opts of [{ openRooms: false }, { maxOpenRooms: 1 }]) {
        const other = createAppServer({ root: null, signaling: { ...LIMITS, ...opts } });
        await new Promise<void>((resolve) => other.server.listen(0, '127.0.0.1', resolve));
        const { port } = other.server.address() as AddressInfo;
        const base = `http://127.0.0.1:${port}`;
        try {
          const a = await connect({}, `ws://127.0.0.1:${port}/`);
          await a.subscribe('one', 'two');
          a.send({ type: 'tutti-announce', topic: 'one', title: 'One', locked: false });
          a.send({ type: 'tutti-announce', topic: 'two', title: 'Two', locked: false });
          await a.sync();
          const got = await list(base);
          if (opts.openRooms === false) assert.deepEqual(got, { enabled: false, rooms: [] });
          else assert.deepEqual(got, { enabled: true, rooms: [{ room: 'one', title: 'One', locked: false, connected: 1 }] });
          assert.equal(other.hub.snapshot().dropped, opts.openRooms === false ? 2 : 1);
          await a.close();
        } finally {
          await other.close();
        }
      }
    });

    test('parseOpenRooms keeps only well-formed entries', () => {
      assert.deepEqual(parseOpenRooms(null), []);
      assert.deepEqual(parseOpenRooms({ rooms: 'x' }), []);
      assert.deepEqual(
        parseOpenRooms({ rooms: [{ room: 'a', title: 'A', locked: true, connected: 2 }, { room: '', title: 'B', locked: false, connected: 1 }, { room: 'c', title: 'C', locked: 'no', connected: 1 }, { room: 'd', title: 'D', locked: false, connected: -1 }, null, 5] }),
        [{ room: 'a', title: 'A', locked: true, connected: 2 }],
      );
    });
  });
  describe('hardening (issue 10)', () => {
    /** A second server with its own limits, for cases that need them (closed after `fn`). */
    async function withHub(limits: Partial<SignalingOptions>, fn: (h: { url: string; app: AppServer }) => Promise<void>): Promise<void> {
      const other = createAppServer({ root: null, signaling: { allowedOrigins: [GOOD_ORIGIN], ...limits } });
      await new Promise<void>((resolve) => other.server.listen(0, '127.0.0.1', resolve));
      const { port } = other.server.address() as AddressInfo;
      try {
        await fn({ url: `ws://127.0.0.1:${port}/`, app: other });
      } finally {
        await other.close();
      }
    }

    test('a deeply nested value inside a publish is dropped, never re-serialised; the hub lives', async () => {
      const by = await bystander();
      const x = await connect();
      const topic = freshTopic('deep');
      await x.subscribe(topic);
      const dropped0 = snap().droppedBy['too-deep'];
      // The frame that used to end the process: JSON.stringify recursed on it (RangeError).
      const deep = (n: number) => `{"type":"publish","topic":"${topic}","data":${'['.repeat(n)}${']'.repeat(n)}}`;
      x.ws.send(deep(1900));
      x.ws.send(`{"type":"publish","topic":"${topic}","data":${'{"a":'.repeat(600)}1${'}'.repeat(600)}}`);
      assert.deepEqual(await x.sync(), [], 'nothing relayed');
      assert.equal(snap().droppedBy['too-deep'] - dropped0, 2);
      // At the limit (the envelope's object is level 1) it is relayed, byte for byte.
      const atLimit = deep(DEFAULT_SIGNALING_LIMITS.maxDepth - 1);
      const raw = new Promise<string>((resolve) => x.ws.once('message', (d) => resolve(d.toString())));
      x.ws.send(atLimit);
      assert.equal(await raw, `${atLimit.slice(0, -1)},"clients":1}`);
      await x.next();
      await by.check();
      await Promise.all([x.close(), by.peer.close()]);
    });

    test('a relay is the sender\'s bytes plus the hub\'s clients, and lib0\'s WebsocketClient (y-webrtc\'s) reads the hub\'s count', async () => {
      const topic = freshTopic('bytes');
      const a = await connect();
      await a.subscribe(topic);
      // lib0's client, as y-webrtc's SignalingConn uses it, on Node's ws.
      const g = globalThis as { WebSocket?: unknown };
      const hadWebSocket = 'WebSocket' in g;
      const saved = g.WebSocket;
      g.WebSocket = class extends WebSocket {
        constructor(u: string) {
          super(u, { origin: GOOD_ORIGIN });
        }
      };
      const y = new lib0ws.WebsocketClient(url);
      try {
        await new Promise<void>((resolve) => y.on('connect', () => resolve()));
        const got = new Promise<Record<string, unknown>>((resolve) => y.on('message', (m: Record<string, unknown>) => { if (m['type'] === 'publish') resolve(m); }));
        y.send({ type: 'subscribe', topics: [topic] });
        y.send({ type: 'ping' });
        await new Promise<void>((resolve) => y.on('message', (m: Record<string, unknown>) => { if (m['type'] === 'pong') resolve(); }));
        // Odd spacing, a forged clients and a __proto__ key: all passed on as sent; the count is the hub's.
        const text = `{ "clients" : 999, "type":"publish", "topic":${JSON.stringify(topic)}, "data":{"__proto__":{"x":1},"s":"\u00e9\\u0000"}, "clients":-1 }\n\t `;
        const echo = new Promise<string>((resolve) => a.ws.once('message', (d) => resolve(d.toString())));
        a.ws.send(text);
        assert.equal(await echo, `${text.trimEnd().slice(0, -1)},"clients":2}`);
        const m = await got;
        assert.equal(m['clients'], 2);
        assert.equal(m['topic'], topic);
        assert.equal(JSON.stringify(m['data']), '{"__proto__":{"x":1},"s":"\u00e9\\u0000"}');
        await a.next();
      } finally {
        y.destroy();
        if (hadWebSocket) g.WebSocket = saved;
        else delete g.WebSocket;
        await a.close();
      }
    });

    test('parseEnvelope and withClients: types, own properties only, whitespace', () => {
      const p = (s: string, binary = false) => parseEnvelope(Buffer.from(s), binary, 8);
      assert.deepEqual(p('{"type":"subscribe","topics":["a",1]}'), { ok: true, msg: { type: 'subscribe', topics: ['a', 1] } });
      assert.deepEqual(p('{"__proto__":{"type":"ping"}}'), { ok: false, fault: 'unknown-type' });
      assert.deepEqual(p('{"type":"publish","topic":{"toString":"x"}}'), { ok: false, fault: 'bad-field' });
      assert.deepEqual(p('{"type":"publish","topic":"a","topic":7}'), { ok: false, fault: 'bad-field' }, 'the last duplicate wins, as for every receiver');
      assert.deepEqual(p('{"type":"tutti-announce","topic":"a","title":"t","locked":"yes"}'), { ok: false, fault: 'bad-field' });
      assert.deepEqual(parseEnvelope(Buffer.from([0x7b, 0xff, 0x7d]), true, 8), { ok: false, fault: 'not-utf8' });
      assert.deepEqual(p('{"type":"ping"}', true), { ok: true, msg: { type: 'ping' } });
      assert.deepEqual(p('[[[[[[[[[1]]]]]]]]]'), { ok: false, fault: 'too-deep' });
      assert.deepEqual(p('"[[[[[[[[[[[[["'), { ok: false, fault: 'not-object' }, 'brackets in strings do not nest');
      assert.equal(nestingDepth(Buffer.from('{"a":"\\"[[[","b":[[]]}'), 10), 3);
      assert.equal(withClients(Buffer.from('{"type":"publish"} \r\n'), 3).toString(), '{"type":"publish","clients":3}');
      assert.throws(() => withClients(Buffer.from('[1]'), 1));
    });

    test('checkOrigin and TUTTI_ALLOWED_ORIGINS parsing', () => {
      const host = 'tutti.example.org';
      assert.equal(checkOrigin('https://tutti.example.org', host, []).ok, true);
      assert.equal(checkOrigin('https://TUTTI.example.org', 'Tutti.Example.org', []).ok, true);
      assert.equal(checkOrigin('https://tutti.example.org:8443', host, []).ok, false, 'another port is another origin');
      assert.equal(checkOrigin('https://other.example', host, []).ok, false);
      assert.equal(checkOrigin('https://other.example', host, ['https://other.example']).ok, true);
      assert.equal(checkOrigin('https://other.example', host, ['*']).ok, true);
      assert.equal(checkOrigin('http://localhost:3000', host, []).ok, true);
      assert.equal(checkOrigin('http://localhost.evil.example', host, []).ok, false);
      assert.equal(checkOrigin('null', host, []).ok, false);
      assert.equal(checkOrigin(undefined, host, []).ok, true);
      assert.deepEqual(parseAllowedOrigins(' https://a.example , http://B.example:8080/,*,'), ['https://a.example', 'http://b.example:8080', '*']);
      assert.deepEqual(parseAllowedOrigins('https://a.example:443'), ['https://a.example']);
      for (const bad of ['a.example', 'https://a.example/path', 'ftp://a.example', 'https://a.example?x=1']) assert.throws(() => parseAllowedOrigins(bad), new RegExp(bad.replace(/[?.*/]/g, '\\$&')));
    });

    test('sockets per address and in total, topics in total and subscribers per topic', async () => {
      await withHub({ maxSocketsPerAddress: 2, maxSockets: 3, maxTopics: 2, maxSubscribersPerTopic: 2 }, async (h) => {
        const s = () => h.app.hub.snapshot();
        const open = (localAddress: string) => connect({ localAddress }, h.url);
        const a1 = await open('127.0.0.1');
        const a2 = await open('127.0.0.1');
        await assert.rejects(open('127.0.0.1'), /unexpected response 429/);
        const b1 = await open('127.0.0.2');
        await assert.rejects(open('127.0.0.3'), /unexpected response 503/);
        assert.deepEqual({ sockets: s().sockets, addresses: s().addresses, refused: s().refused }, { sockets: 3, addresses: 2, refused: { origin: 0, 'per-address': 1, total: 1 } });
        // Two subscribers per topic, two topics on the server: the rest is skipped, not fatal.
        await a1.subscribe('t1', 't2', 't3');
        await a2.subscribe('t1');
        await b1.subscribe('t1', 't2');
        assert.deepEqual({ topics: s().topics, t1: h.app.hub.subscribers('t1'), t2: h.app.hub.subscribers('t2') }, { topics: 2, t1: 2, t2: 2 });
        assert.deepEqual([s().droppedBy['topics-full'], s().droppedBy['topic-full']], [1, 1]);
        // b1 is not on t1, so it may not publish there.
        b1.send({ type: 'publish', topic: 't1', data: 'x' });
        assert.deepEqual(await b1.sync(), []);
        assert.equal(s().droppedBy['not-subscribed'], 1);
        // A freed slot is usable again.
        await a2.close();
        await waitFor(() => s().sockets === 2, 'a2 to go');
        const a3 = await open('127.0.0.1');
        await Promise.all([a1.close(), a3.close(), b1.close()]);
        await waitFor(() => s().sockets === 0 && s().addresses === 0 && s().topics === 0, 'everything to drain');
      });
    });

    test('rates are per address too: a new socket from the same address gets no fresh burst', async () => {
      await withHub({ rateLimit: 1000, addressRateLimit: 50 }, async (h) => {
        const a = await connect({ localAddress: '127.0.0.1' }, h.url);
        for (let i = 0; i < 90; i++) a.send({ type: 'ping' });
        await a.sync();
        await a.close();
        const b = await connect({ localAddress: '127.0.0.1' }, h.url);
        for (let i = 0; i < 30; i++) b.send({ type: 'ping' });
        assert.equal((await b.closedWithin(2000)).code, CloseCode.RATE_LIMITED, 'the address had used its burst');
        const other = await connect({ localAddress: '127.0.0.2' }, h.url);
        for (let i = 0; i < 30; i++) other.send({ type: 'ping' });
        await other.sync();
        assert.equal(other.ws.readyState, WebSocket.OPEN, 'another address has its own');
        await other.close();
      });
    });

    test('addressKey: IPv4 as is, IPv6 by /64, IPv4-mapped as IPv4', () => {
      assert.equal(addressKey('192.0.2.7'), '192.0.2.7');
      assert.equal(addressKey('::ffff:192.0.2.7'), '192.0.2.7');
      assert.equal(addressKey('::1'), '::1');
      assert.equal(addressKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
      assert.equal(addressKey('2001:db8:1:2::99'), '2001:db8:1:2::/64');
      assert.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
      assert.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
      assert.equal(addressKey(undefined), 'unknown');
    });

    test('a reader that stops reading is cut when its queue passes maxBufferedBytes; the others go on', async () => {
      const maxBufferedBytes = 256 * 1024;
      await withHub({ maxPayload: 64 * 1024, rateLimit: 10_000, byteRateLimit: 1 << 30, maxBufferedBytes }, async (h) => {
        const topic = 'slow';
        const slow = await connect({}, h.url);
        const writer = await connect({}, h.url);
        const other = await connect({}, h.url);
        await slow.subscribe(topic);
        await writer.subscribe(topic);
        await other.subscribe(topic);
        // Stop reading: the kernel buffers fill, then the hub's queue for `slow` grows.
        (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
        const chunk = JSON.stringify({ type: 'publish', topic, data: 'x'.repeat(60 * 1024) });
        let sent = 0;
        while (h.app.hub.snapshot().closedBy['slow-reader'] === 0) {
          assert.ok(sent < 2000, 'slow reader never cut (over 120 MB sent)');
          for (let i = 0; i < 20; i++) writer.ws.send(chunk);
          sent += 20;
          await writer.sync(); // also drains the writer's own echoes
          await other.sync();
        }
        assert.equal(h.app.hub.subscribers(topic), 2, 'only the slow reader went');
        writer.send({ type: 'publish', topic, data: 'after' });
        assert.deepEqual((await other.sync()).at(-1), { type: 'publish', topic, data: 'after', clients: 2 });
        assert.equal(h.app.hub.snapshot().closedForAbuse, 1);
        slow.ws.terminate();
        await Promise.all([writer.close(), other.close()]);
      });
    });

    test('liveness comes from pongs only: a chatty socket that never pongs is closed', async () => {
      await withHub({ pingTimeoutMs: 300 }, async (h) => {
        const chatty = new Peer(new WebSocket(h.url, { autoPong: false }));
        await new Promise<void>((resolve) => chatty.ws.once('open', () => resolve()));
        const steady = await connect({}, h.url);
        const timer = setInterval(() => chatty.ws.readyState === WebSocket.OPEN && chatty.send({ type: 'ping' }), 50);
        try {
          await chatty.closedWithin(2000);
        } finally {
          clearInterval(timer);
        }
        assert.equal(h.app.hub.snapshot().closedBy['ping-timeout'], 1);
        await sleep(400);
        assert.equal(steady.ws.readyState, WebSocket.OPEN, 'a socket that answers pings stays');
        await steady.close();
      });
    });

    test('a handler that throws closes that socket only, with 1011, and is counted', async () => {
      await withHub({}, async (h) => {
        const a = await connect({}, h.url);
        const b = await connect({}, h.url);
        await a.subscribe('room');
        await b.subscribe('room');
        // Simulate a bug reached by one client's input: the next subscribe throws inside the hub.
        const hub = h.app.hub as unknown as { subscribe: (...args: unknown[]) => void };
        const real = hub.subscribe;
        hub.subscribe = () => {
          throw new Error('simulated handler bug');
        };
        const errors: unknown[][] = [];
        const log = console.error;
        console.error = (...args: unknown[]) => void errors.push(args);
        try {
          const bad = await connect({}, h.url);
          bad.send({ type: 'subscribe', topics: ['x'] });
          assert.equal((await bad.closedWithin(2000)).code, CloseCode.INTERNAL_ERROR);
        } finally {
          hub.subscribe = real;
          console.error = log;
        }
        assert.equal(errors.length, 1, 'logged once');
        assert.equal(h.app.hub.snapshot().closedBy['internal-error'], 1);
        a.send({ type: 'publish', topic: 'room', data: 'still' });
        assert.deepEqual(await b.next(), { type: 'publish', topic: 'room', data: 'still', clients: 2 });
        await Promise.all([a.close(), b.close()]);
      });
    });

    test('/healthz reports the limits in force, and PROTOCOL.md §3.3 documents every one with its default', async () => {
      const body = (await (await fetch(`${httpBase}/healthz`)).json()) as { signaling: SignalingHealth };
      assert.deepEqual(body.signaling.limits, { ...DEFAULT_SIGNALING_LIMITS, ...LIMITS, openRooms: true });
      const doc = readFileSync(new URL('../../docs/PROTOCOL.md', import.meta.url), 'utf8');
      const section = doc.slice(doc.indexOf('### 3.3'), doc.indexOf('### 3.4'));
      for (const [key, value] of Object.entries(DEFAULT_SIGNALING_LIMITS)) {
        const row = section.split('\n').find((l) => l.includes(`\`${key}\``));
        assert.ok(row, `PROTOCOL.md §3.3 has a row for ${key}`);
        assert.ok(row.replace(/[ ,_]/g, '').includes(String(value)) || row.includes(humanBytes(value)), `its row gives the default ${value}: ${row}`);
      }
    });
  });
});

/** 65536 → '64 KiB', 1048576 → '1 MiB' (how PROTOCOL.md writes byte sizes). */
function humanBytes(n: number): string {
  if (n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n % 1024 === 0) return `${n / 1024} KiB`;
  return String(n);
}
