// Signaling hub (server/signaling.ts) end to end over real WebSockets on loopback: y-webrtc's
// protocol (subscribe / unsubscribe / publish / ping), the hardening (malformed frames dropped,
// oversized frames, topic limit, rate limit, Origin allow-list, dead-socket sweep) and /healthz.
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
import type { SignalingCounters } from '../../server/signaling.ts';
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

function snap(): SignalingCounters {
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

    // b can still publish into c's topic without being subscribed to it (y-webrtc semantics)
    b.send({ type: 'publish', topic: other, data: 'to-c' });
    assert.deepEqual(await c.next(), { type: 'publish', topic: other, data: 'to-c', clients: 1 });
    assert.deepEqual(await b.sync(), [], 'a non-subscriber publisher gets no echo');

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

  test('the Origin allow-list refuses other origins with 403', async () => {
    const by = await bystander();
    const sockets0 = snap().sockets;
    const evil = await tryOrigin(EVIL_ORIGIN);
    assert.equal(evil.opened, false, 'evil origin must not connect');
    if (evil.status !== undefined) assert.equal(evil.status, 403);
    else assert.ok(evil.error, 'refused with an error');
    const none = await tryOrigin(undefined);
    assert.equal(none.opened, false, 'no Origin header must not connect when an allow-list is set');
    const good = await tryOrigin(GOOD_ORIGIN);
    assert.equal(good.opened, true, 'good origin connects');
    await waitFor(() => snap().sockets === sockets0, 'accepted test socket to close');
    await by.check();
    await by.peer.close();
  });

  test('a socket that answers no pings is closed by the sweep', async () => {
    const by = await bystander();
    const dead = new Peer(new WebSocket(url, { origin: GOOD_ORIGIN, autoPong: false }));
    await new Promise<void>((resolve, reject) => {
      dead.ws.once('open', () => resolve());
      dead.ws.once('error', reject);
    });
    let pingsSeen = 0;
    dead.ws.on('ping', () => pingsSeen++);
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
});
