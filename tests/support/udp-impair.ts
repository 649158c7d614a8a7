// A small UDP impairment relay between TURN clients (the browsers) and the TURN server: each
// datagram a client sends is dropped with a set probability, or delivered after a random delay
// (uniform in delay ± jitter). Like a real queue, jitter keeps a flow's order (a datagram never
// leaves before the one sent ahead of it), except for a set share that is held back behind 1–3
// later ones: explicit reordering. The server's answers go back at once. One upstream socket per
// client address, so the server sees each client as itself. Seeded, counted. Node side of the TURN
// fault test.

import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { mulberry32 } from '../unit/prng.ts';

export interface ImpairOptions {
  /** Mean one-way delay added to client → server datagrams, ms. */
  delayMs: number;
  /** Uniform spread around the mean, ms (delay is delayMs ± jitterMs). */
  jitterMs: number;
  /** Percent of client → server datagrams dropped, chosen at random per datagram. */
  dropPercent: number;
  /** Percent of delivered datagrams held back behind later ones (arrive out of order). */
  reorderPercent: number;
  seed: number;
}

export interface ImpairCounters {
  /** Client → server datagrams received from the browsers. */
  up: number;
  /** Of those, dropped. */
  dropped: number;
  /** Of those delivered, how many overtook an earlier one of the same client. */
  reordered: number;
  /** Server → client datagrams. */
  down: number;
  clients: number;
}

interface Session {
  sock: Socket;
  sent: number;
  lastDelivered: number;
  lastDue: number;
}

interface Pending {
  due: number;
  n: number;
  msg: Buffer;
  session: Session;
}

export class UdpImpairRelay {
  port = 0;
  readonly counters: ImpairCounters = { up: 0, dropped: 0, reordered: 0, down: 0, clients: 0 };
  private readonly front: Socket = createSocket('udp4');
  private readonly sessions = new Map<string, Session>();
  /** Datagrams waiting, sorted by due time (ties keep arrival order); one timer pumps the head. */
  private queue: Pending[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly rng: () => number;
  private closed = false;

  constructor(
    private readonly serverPort: number,
    private opts: ImpairOptions,
    private readonly serverHost = '127.0.0.1',
  ) {
    if (opts.jitterMs > opts.delayMs) throw new Error('jitter must not exceed the mean delay');
    if (!(opts.dropPercent >= 0 && opts.dropPercent <= 100)) throw new Error(`dropPercent must be 0..100, got ${opts.dropPercent}`);
    this.rng = mulberry32(opts.seed);
  }

  async start(): Promise<this> {
    this.front.on('message', (msg, rinfo) => this.fromClient(msg, rinfo));
    await new Promise<void>((r) => this.front.bind(0, '127.0.0.1', r));
    this.port = this.front.address().port;
    return this;
  }

  setImpairment(p: Partial<Pick<ImpairOptions, 'dropPercent' | 'reorderPercent'>>): void {
    this.opts = { ...this.opts, ...p };
  }

  snapshot(): ImpairCounters {
    return { ...this.counters, clients: this.sessions.size };
  }

  private fromClient(msg: Buffer, rinfo: RemoteInfo): void {
    const key = `${rinfo.address}:${rinfo.port}`;
    let s = this.sessions.get(key);
    if (!s) {
      const sock = createSocket('udp4');
      sock.on('message', (m) => {
        this.counters.down++;
        if (!this.closed) this.front.send(m, rinfo.port, rinfo.address);
      });
      sock.bind(0, '127.0.0.1');
      s = { sock, sent: 0, lastDelivered: -1, lastDue: 0 };
      this.sessions.set(key, s);
    }
    this.counters.up++;
    const n = s.sent++;
    if (this.rng() * 100 < this.opts.dropPercent) {
      this.counters.dropped++;
      return;
    }
    const now = performance.now();
    // FIFO: not before the previous datagram of this client is due.
    let due = Math.max(now + this.opts.delayMs + (this.rng() * 2 - 1) * this.opts.jitterMs, s.lastDue);
    if (this.rng() * 100 < this.opts.reorderPercent) due += 3 + this.rng() * 3; // behind the next 1–2 (2.67 ms apart)
    else s.lastDue = due;
    // Insert by due time from the end (nearly always appends). Node's own timers do not keep the
    // order of different delays that expire together, so one timer releases the queue in order.
    let i = this.queue.length;
    while (i > 0 && this.queue[i - 1]!.due > due) i--;
    this.queue.splice(i, 0, { due, n, msg, session: s });
    this.arm();
  }

  private arm(): void {
    if (this.timer || this.closed || this.queue.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const now = performance.now();
      let k = 0;
      while (k < this.queue.length && this.queue[k]!.due <= now + 0.5) {
        const p = this.queue[k++]!;
        if (p.n < p.session.lastDelivered) this.counters.reordered++;
        else p.session.lastDelivered = p.n;
        p.session.sock.send(p.msg, this.serverPort, this.serverHost);
      }
      this.queue.splice(0, k);
      this.arm();
    }, Math.max(0, this.queue[0]!.due - performance.now()));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.queue = [];
    for (const s of this.sessions.values()) s.sock.close();
    await new Promise<void>((r) => this.front.close(() => r()));
  }
}
