// The soak's attackers (a child process of bench/scenarios/soak.ts, so their CPU is not the honest
// clients' event loop): a few hundred WebSockets on loopback addresses 127.0.0.10 and up, each
// role in a loop until the deadline, reconnecting whenever the hub closes it. None knows the
// honest pair's topic (a room name is the capability; docs/TESTING.md, threat model).
//
//   garbage   invalid JSON, random bytes, invalid UTF-8, deep nesting, huge topic lists, prototype
//             keys, wrong types, oversized frames, publishes to topics it is not on
//   flood     publishes 4–60 KB into its own topic as fast as it can (closed for rate, reconnects)
//   slow      subscribes to a sink topic and stops reading; a feeder per sink publishes into it
//   churn     opens and closes sockets back to back
//   crowd     more idle sockets from one address than the per-address limit allows
//   origin    handshakes from another site's page (Origin: https://evil.example)
//
// Argument: JSON SoakAttack. Reports a SoakAttackReport over IPC when done.

import { WebSocket } from 'ws';
import { mulberry32 } from '../../tests/unit/prng.ts';

export interface SoakAttack {
  url: string;
  seconds: number;
  seed: number;
  garbage: number;
  flood: number;
  /** Sinks, each with `slowPerSink` readers that stop reading and one feeder. */
  sinks: number;
  slowPerSink: number;
  churn: number;
  crowd: number;
}

export interface SoakAttackReport {
  /** Sockets opened, and upgrades the hub refused, by HTTP status. */
  opened: number;
  refused: Record<string, number>;
  /** Frames sent by all attackers. */
  frames: number;
  /** Closes seen by the attackers, by close code (1006: cut without a close frame). */
  closes: Record<string, number>;
  /** Most attacker sockets open at once. */
  peakOpen: number;
}

const report: SoakAttackReport = { opened: 0, refused: {}, frames: 0, closes: {}, peakOpen: 0 };
let open = 0;
const bump = (r: Record<string, number>, k: string | number): void => void (r[k] = (r[k] ?? 0) + 1);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function connect(url: string, localAddress: string, origin?: string): Promise<WebSocket | null> {
  const ws = new WebSocket(url, { localAddress, ...(origin ? { origin } : {}) });
  ws.on('error', () => {});
  return new Promise((resolve) => {
    ws.once('open', () => {
      report.opened++;
      report.peakOpen = Math.max(report.peakOpen, ++open);
      ws.once('close', (code) => {
        open--;
        bump(report.closes, code);
      });
      resolve(ws);
    });
    ws.once('unexpected-response', (req, res) => {
      bump(report.refused, res.statusCode ?? 0);
      req.destroy();
      resolve(null);
    });
    ws.once('close', () => resolve(null));
  });
}

function send(ws: WebSocket, data: string | Buffer, binary = false): void {
  if (ws.readyState !== WebSocket.OPEN) return;
  ws.send(data, { binary });
  report.frames++;
}

/** Wait until `ws` closes or `until` passes. */
function closedOrDeadline(ws: WebSocket, until: number): Promise<void> {
  return new Promise((resolve) => {
    if (ws.readyState !== WebSocket.OPEN) return resolve();
    const t = setTimeout(resolve, Math.max(0, until - Date.now()));
    ws.once('close', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

function garbageFrame(rng: () => number, topic: string): { data: string | Buffer; binary: boolean } {
  const n = (k: number) => Math.floor(rng() * k);
  switch (n(10)) {
    case 0:
      return { data: '{"type":"publish","topic":' + '['.repeat(1 + n(5)), binary: false };
    case 1:
      return { data: Buffer.from(Array.from({ length: 1 + n(2000) }, () => n(256))), binary: true };
    case 2:
      return { data: Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0xff, 0xfe, 0x22, 0x7d]), binary: true }; // invalid UTF-8
    case 3: {
      const d = 40 + n(20_000);
      return { data: `{"type":"publish","topic":"${topic}","data":${'['.repeat(d)}${']'.repeat(d)}}`, binary: false };
    }
    case 4:
      return { data: `{"type":"subscribe","topics":[${Array.from({ length: 1 + n(6000) }, (_, i) => (i % 3 ? i : `"g${i % 40}"`)).join(',')}]}`, binary: false };
    case 5:
      return { data: `{"__proto__":{"type":"publish"},"constructor":{"prototype":1},"type":"publish","topic":"__proto__","data":{"__proto__":null}}`, binary: false };
    case 6:
      return { data: JSON.stringify({ type: ['publish'], topic: { toString: 1 }, topics: 'x', clients: -1 }), binary: false };
    case 7:
      return { data: JSON.stringify({ type: 'publish', topic, data: 'x'.repeat(70 * 1024) }), binary: false }; // over maxPayload: closed 1009
    case 8:
      return { data: JSON.stringify({ type: 'publish', topic: `not-mine-${n(100)}`, data: 'hello' }), binary: false };
    default:
      return { data: JSON.stringify({ type: 'tutti-announce', topic, title: '\u0000'.repeat(n(200)), locked: n(2) === 0 }), binary: false };
  }
}

async function garbage(cfg: SoakAttack, id: number, address: string, until: number): Promise<void> {
  const rng = mulberry32(cfg.seed + id);
  while (Date.now() < until) {
    const ws = await connect(cfg.url, address);
    if (!ws) {
      await sleep(100);
      continue;
    }
    const topic = `garbage-${id}`;
    send(ws, JSON.stringify({ type: 'subscribe', topics: [topic] }));
    while (ws.readyState === WebSocket.OPEN && Date.now() < until) {
      const f = garbageFrame(rng, topic);
      send(ws, f.data, f.binary);
      await sleep(20 + rng() * 60);
    }
    ws.terminate();
    await sleep(50);
  }
}

async function flood(cfg: SoakAttack, id: number, address: string, until: number): Promise<void> {
  const rng = mulberry32(cfg.seed + 1000 + id);
  while (Date.now() < until) {
    const ws = await connect(cfg.url, address);
    if (!ws) {
      await sleep(100);
      continue;
    }
    const topic = `flood-${id}`;
    send(ws, JSON.stringify({ type: 'subscribe', topics: [topic] }));
    const frame = JSON.stringify({ type: 'publish', topic, data: 'f'.repeat(4000 + Math.floor(rng() * 56_000)) });
    while (ws.readyState === WebSocket.OPEN && Date.now() < until) {
      for (let i = 0; i < 50; i++) send(ws, frame);
      await sleep(1);
    }
    ws.terminate();
    await sleep(100);
  }
}

async function slowReader(cfg: SoakAttack, sink: string, address: string, until: number): Promise<void> {
  while (Date.now() < until) {
    const ws = await connect(cfg.url, address);
    if (!ws) {
      await sleep(100);
      continue;
    }
    send(ws, JSON.stringify({ type: 'subscribe', topics: [sink] }));
    await sleep(20);
    // Stop reading: the kernel's buffers fill, then the hub's queue for this socket.
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    await closedOrDeadline(ws, until);
    ws.terminate();
    await sleep(50);
  }
}

async function feeder(cfg: SoakAttack, sink: string, address: string, until: number): Promise<void> {
  const frame = JSON.stringify({ type: 'publish', topic: sink, data: 's'.repeat(60 * 1024) });
  while (Date.now() < until) {
    const ws = await connect(cfg.url, address);
    if (!ws) {
      await sleep(100);
      continue;
    }
    send(ws, JSON.stringify({ type: 'subscribe', topics: [sink] }));
    // Within its byte budget (each publish is charged once per subscriber): it stays connected.
    while (ws.readyState === WebSocket.OPEN && Date.now() < until) {
      send(ws, frame);
      await sleep(25);
    }
    ws.terminate();
  }
}

async function churn(cfg: SoakAttack, address: string, until: number): Promise<void> {
  while (Date.now() < until) {
    const ws = await connect(cfg.url, address);
    if (ws) {
      send(ws, JSON.stringify({ type: 'subscribe', topics: ['churn'] }));
      ws.terminate();
    }
    await sleep(5);
  }
}

async function crowd(cfg: SoakAttack, address: string, until: number): Promise<void> {
  const socks = (await Promise.all(Array.from({ length: cfg.crowd }, () => connect(cfg.url, address)))).filter((w): w is WebSocket => w !== null);
  for (const ws of socks) send(ws, JSON.stringify({ type: 'subscribe', topics: ['crowd'] }));
  await sleep(Math.max(0, until - Date.now()));
  for (const ws of socks) ws.terminate();
}

async function evilOrigin(cfg: SoakAttack, address: string, until: number): Promise<void> {
  while (Date.now() < until) {
    const ws = await connect(cfg.url, address, 'https://evil.example');
    ws?.terminate();
    await sleep(50);
  }
}

async function main(cfg: SoakAttack): Promise<void> {
  const until = Date.now() + cfg.seconds * 1000;
  // 40 sockets per address at most, well under the per-address limit (the crowd has its own).
  let next = 0;
  const address = () => `127.0.0.${10 + Math.floor(next++ / 40)}`;
  const jobs: Promise<void>[] = [];
  for (let i = 0; i < cfg.garbage; i++) jobs.push(garbage(cfg, i, address(), until));
  for (let i = 0; i < cfg.flood; i++) jobs.push(flood(cfg, i, address(), until));
  for (let s = 0; s < cfg.sinks; s++) {
    const sink = `sink-${s}`;
    for (let i = 0; i < cfg.slowPerSink; i++) jobs.push(slowReader(cfg, sink, address(), until));
    // Each feeder on an address of its own: its address's byte budget is all its (within limits).
    jobs.push(feeder(cfg, sink, `127.0.0.${200 + s}`, until));
  }
  for (let i = 0; i < cfg.churn; i++) jobs.push(churn(cfg, address(), until));
  jobs.push(evilOrigin(cfg, address(), until));
  jobs.push(crowd(cfg, '127.0.0.9', until));
  await Promise.all(jobs);
  await sleep(200); // the last closes
  process.send?.({ type: 'report', report });
}

const cfg = JSON.parse(process.argv[2] ?? '{}') as SoakAttack;
main(cfg).then(
  () => process.disconnect?.(),
  (err: unknown) => {
    console.error('soak attackers failed:', err);
    process.exit(1);
  },
);
