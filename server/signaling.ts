// Tutti's signaling hub (Node): y-webrtc's protocol (subscribe / unsubscribe / publish / ping)
// over WebSocket, plus Tutti's open-rooms extension. It must outlive any client: every handler
// runs under a guard, frames are validated with bounded work (./signaling-envelope.ts) and relayed
// as received, every resource is bounded (./signaling-limits.ts), and misbehaviour closes that one
// socket with its own code, counted in GET /healthz. docs/PROTOCOL.md §3.2–3.3 is the contract.
// (Over 300 lines: envelope, limits, origin and the open-rooms list are already their own files;
// what is left is the one hub object whose handlers share its socket and topic tables.)

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { CloseCode, type OpenRoom } from '../src/shared/signaling-protocol.ts';
import { OpenRoomsList } from './open-rooms-list.ts';
import { parseEnvelope, withClients, type FrameFault } from './signaling-envelope.ts';
import { BURST_SECONDS, DEFAULT_SIGNALING_OPTIONS, type SignalingOptions } from './signaling-limits.ts';
import { addressKey } from './remote-address.ts';
import { checkOrigin } from './signaling-origin.ts';
import { TokenBucket } from './token-bucket.ts';

export { DEFAULT_SIGNALING_OPTIONS, type SignalingOptions } from './signaling-limits.ts';

/**
 * One remote address: its open sockets, and rate buckets shared by all of them, so that closing
 * and reopening a socket does not buy a fresh burst. Kept after its last socket goes until its
 * buckets are full again (pruned by the sweep).
 */
interface Address {
  sockets: number;
  frames: TokenBucket;
  bytes: TokenBucket;
}

interface Client {
  ws: WebSocket;
  address: string;
  from: Address;
  topics: Set<string>;
  frames: TokenBucket;
  bytes: TokenBucket;
  /** Set by a pong only (never by other traffic), cleared by each sweep's ping. */
  alive: boolean;
}

/** Why the hub refused part or all of a frame without closing the socket. */
export type DropReason = FrameFault | 'bad-topic' | 'not-subscribed' | 'topic-full' | 'topics-full' | 'announce';
/** Why a socket was closed by the server. */
export type CloseReason = 'too-big' | 'protocol' | 'too-many-topics' | 'rate-limited' | 'slow-reader' | 'ping-timeout' | 'internal-error';
/** Why an upgrade was refused before any WebSocket existed. */
export type RefuseReason = 'origin' | 'per-address' | 'total';

export interface SignalingCounters {
  /** Open sockets, distinct remote addresses among them, topics, listed rooms (now). */
  sockets: number;
  addresses: number;
  topics: number;
  openRooms: number;
  /** Frames accepted and handled. */
  messages: number;
  /** Copies sent to subscribers (relays and pongs). */
  relayed: number;
  /** Frames, or topic names within a (un)subscribe, refused; by reason in `droppedBy`. */
  dropped: number;
  droppedBy: Record<DropReason, number>;
  /** Sockets closed for going over a limit (too many topics, rate, slow reader). */
  closedForAbuse: number;
  closedBy: Record<CloseReason, number>;
  refused: Record<RefuseReason, number>;
}

export interface SignalingHealth extends SignalingCounters {
  /** The limits and settings in force. */
  limits: SignalingOptions;
}

const PONG = Buffer.from(JSON.stringify({ type: 'pong' }));
/** Handler errors are logged, but only this many: a client must not be able to flood the log. */
const MAX_LOGGED_ERRORS = 20;

const ABUSE: ReadonlySet<CloseReason> = new Set(['too-many-topics', 'rate-limited', 'slow-reader']);

export class SignalingHub {
  private readonly wss: WebSocketServer;
  private readonly topics = new Map<string, Set<Client>>();
  private readonly clients = new Set<Client>();
  private readonly perAddress = new Map<string, Address>();
  private readonly listings: OpenRoomsList<Client>;
  private readonly opts: SignalingOptions;
  private readonly pingTimer: ReturnType<typeof setInterval>;
  private loggedErrors = 0;
  private readonly counters: Omit<SignalingCounters, 'sockets' | 'addresses' | 'topics' | 'openRooms'> = {
    messages: 0,
    relayed: 0,
    dropped: 0,
    droppedBy: { 'not-utf8': 0, 'too-deep': 0, 'not-json': 0, 'not-object': 0, 'unknown-type': 0, 'bad-field': 0, 'bad-topic': 0, 'not-subscribed': 0, 'topic-full': 0, 'topics-full': 0, announce: 0 },
    closedForAbuse: 0,
    closedBy: { 'too-big': 0, protocol: 0, 'too-many-topics': 0, 'rate-limited': 0, 'slow-reader': 0, 'ping-timeout': 0, 'internal-error': 0 },
    refused: { origin: 0, 'per-address': 0, total: 0 },
  };

  constructor(opts: Partial<SignalingOptions> = {}) {
    this.opts = { ...DEFAULT_SIGNALING_OPTIONS, ...opts };
    this.listings = new OpenRoomsList(this.opts.maxAnnouncedPerSocket, this.opts.maxOpenRooms);
    this.wss = new WebSocketServer({ noServer: true, maxPayload: this.opts.maxPayload, perMessageDeflate: false, clientTracking: false });
    this.pingTimer = setInterval(() => this.sweep(), this.opts.pingTimeoutMs / 2);
    this.pingTimer.unref();
  }

  /**
   * Route an HTTP upgrade here (any path: y-webrtc clients connect to the server's root). Refuses
   * with an HTTP status before the handshake: 403 for an origin that may not connect, 429 over
   * the per-address limit, 503 over the total.
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // Until ws takes the socket over, an error on it (a reset mid-handshake) must not be unhandled.
    socket.on('error', () => {});
    try {
      const origin = checkOrigin(req.headers.origin, req.headers.host, this.opts.allowedOrigins);
      if (!origin.ok) return this.refuse(socket, 'origin', '403 Forbidden');
      if (this.clients.size >= this.opts.maxSockets) return this.refuse(socket, 'total', '503 Service Unavailable');
      const address = addressKey(req.socket.remoteAddress);
      if ((this.perAddress.get(address)?.sockets ?? 0) >= this.opts.maxSocketsPerAddress) return this.refuse(socket, 'per-address', '429 Too Many Requests');
      // ws calls back synchronously (no verifyClient), so the counts above cannot be raced.
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws, address));
    } catch (err) {
      this.logError(err);
      socket.destroy();
    }
  }

  get openRoomsEnabled(): boolean {
    return this.opts.openRooms;
  }

  /** Counters, gauges and the limits in force (GET /healthz). */
  snapshot(): SignalingHealth {
    const c = this.counters;
    return {
      sockets: this.clients.size,
      addresses: this.addressesInUse(),
      topics: this.topics.size,
      openRooms: this.listings.size,
      messages: c.messages,
      relayed: c.relayed,
      dropped: c.dropped,
      droppedBy: { ...c.droppedBy },
      closedForAbuse: c.closedForAbuse,
      closedBy: { ...c.closedBy },
      refused: { ...c.refused },
      limits: { ...this.opts, allowedOrigins: [...this.opts.allowedOrigins] },
    };
  }

  /** Subscribers of `topic` now (0 if none). */
  subscribers(topic: string): number {
    return this.topics.get(topic)?.size ?? 0;
  }

  /**
   * The open-rooms list (GET /rooms): rooms that a subscribed member announced, busiest first. A
   * room leaves it when its last announcing socket unsubscribes, unannounces or goes away.
   */
  openRooms(): OpenRoom[] {
    return this.listings.list((t) => this.subscribers(t));
  }

  close(): void {
    clearInterval(this.pingTimer);
    for (const c of [...this.clients]) {
      c.ws.terminate();
      this.drop(c);
    }
    this.wss.close();
  }

  private refuse(socket: Duplex, why: RefuseReason, status: string): void {
    this.counters.refused[why]++;
    socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    socket.destroy();
  }

  private onConnection(ws: WebSocket, address: string): void {
    const now = Date.now();
    const o = this.opts;
    let from = this.perAddress.get(address);
    if (!from) {
      // Many short-lived addresses (IPv6 prefixes) must not grow the map without bound.
      if (this.perAddress.size >= 2 * o.maxSockets) this.pruneAddresses(now, true);
      from = { sockets: 0, frames: new TokenBucket(o.addressRateLimit, o.addressRateLimit * BURST_SECONDS, now), bytes: new TokenBucket(o.addressByteRateLimit, o.addressByteRateLimit * BURST_SECONDS, now) };
      this.perAddress.set(address, from);
    }
    from.sockets++;
    const client: Client = {
      ws,
      address,
      from,
      topics: new Set(),
      frames: new TokenBucket(o.rateLimit, o.rateLimit * BURST_SECONDS, now),
      bytes: new TokenBucket(o.byteRateLimit, o.byteRateLimit * BURST_SECONDS, now),
      alive: true,
    };
    this.clients.add(client);
    ws.on('message', (raw, isBinary) => this.guard(client, () => this.onMessage(client, raw, isBinary)));
    ws.on('pong', () => (client.alive = true));
    // ws closes the socket itself after an invalid frame (1009 too big, 1002/1007 protocol).
    ws.on('error', (err: Error & { code?: string }) => this.guard(client, () => this.closed(client, err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? 'too-big' : 'protocol')));
    ws.on('close', () => this.guard(client, () => this.drop(client)));
  }

  /** Run one handler; if it throws, only this client pays: closed with 1011 and counted. */
  private guard(c: Client, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logError(err);
      try {
        this.closeFor(c, 'internal-error', CloseCode.INTERNAL_ERROR);
      } catch (again) {
        this.logError(again);
        try {
          c.ws.terminate();
        } finally {
          this.drop(c);
        }
      }
    }
  }

  private logError(err: unknown): void {
    if (this.loggedErrors >= MAX_LOGGED_ERRORS) return;
    this.loggedErrors++;
    console.error(`signaling: handler error (closing that socket only)${this.loggedErrors === MAX_LOGGED_ERRORS ? '; further ones are counted, not logged' : ''}:`, err);
  }

  private onMessage(c: Client, raw: RawData, isBinary: boolean): void {
    // Frames already buffered when we closed a socket still arrive: a dropped client is done.
    if (!this.clients.has(c)) return;
    const bytes = Array.isArray(raw) ? Buffer.concat(raw) : Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
    const now = Date.now();
    if (!this.charge(c, bytes.length, now)) return this.closeFor(c, 'rate-limited', CloseCode.RATE_LIMITED);
    const parsed = parseEnvelope(bytes, isBinary, this.opts.maxDepth);
    if (!parsed.ok) return this.dropped(parsed.fault);
    this.counters.messages++;
    const m = parsed.msg;
    switch (m.type) {
      case 'subscribe':
        return this.subscribe(c, m.topics);
      case 'unsubscribe':
        for (const t of m.topics) if (typeof t === 'string') this.leave(c, t);
        return;
      case 'publish': {
        // Only members relay into a room: a socket publishes to the topics it subscribed to.
        const subs = c.topics.has(m.topic) ? this.topics.get(m.topic) : undefined;
        if (!subs) return this.dropped('not-subscribed');
        const out = withClients(bytes, subs.size);
        // The copies count against the sender's own byte budget (not its address's: a class behind
        // one NAT forming its mesh would pay for the room's fan-out many times over).
        if (!c.bytes.take(out.length * subs.size, now)) return this.closeFor(c, 'rate-limited', CloseCode.RATE_LIMITED);
        for (const s of [...subs]) this.send(s, out);
        return;
      }
      case 'ping':
        return this.send(c, PONG);
      case 'tutti-announce':
        // Only a member can list a room: the socket must be subscribed to its topic.
        if (!this.opts.openRooms || !c.topics.has(m.topic) || !this.listings.announce(c, m.topic, m.title, m.locked)) this.dropped('announce');
        return;
      case 'tutti-unannounce':
        return this.listings.withdraw(c, m.topic);
      default:
        m satisfies never;
    }
  }

  /** Charge one received frame of `bytes` to the socket's and its address's buckets; false if any is short. */
  private charge(c: Client, bytes: number, now: number): boolean {
    return c.frames.take(1, now) && c.bytes.take(bytes, now) && c.from.frames.take(1, now) && c.from.bytes.take(bytes, now);
  }

  /** Addresses with open sockets (the map also holds recently used ones until their buckets refill). */
  private addressesInUse(): number {
    let n = 0;
    for (const a of this.perAddress.values()) if (a.sockets > 0) n++;
    return n;
  }

  private subscribe(c: Client, topics: readonly unknown[]): void {
    const o = this.opts;
    for (const t of topics) {
      if (typeof t !== 'string' || t.length === 0 || t.length > o.maxTopicLength) {
        this.dropped('bad-topic');
        continue;
      }
      if (c.topics.has(t)) continue;
      if (c.topics.size >= o.maxTopicsPerSocket) return this.closeFor(c, 'too-many-topics', CloseCode.TOO_MANY_TOPICS);
      let subs = this.topics.get(t);
      if (!subs) {
        if (this.topics.size >= o.maxTopics) {
          this.dropped('topics-full');
          continue;
        }
        this.topics.set(t, (subs = new Set()));
      } else if (subs.size >= o.maxSubscribersPerTopic) {
        this.dropped('topic-full');
        continue;
      }
      subs.add(c);
      c.topics.add(t);
    }
  }

  /** Queue `bytes` as a text frame to `c`, or cut `c` if it is not reading what it already has. */
  private send(c: Client, bytes: Buffer): void {
    if (c.ws.readyState !== WebSocket.OPEN) return;
    if (c.ws.bufferedAmount + bytes.length > this.opts.maxBufferedBytes) {
      // A close frame would queue behind the data it is not reading: cut it at once.
      this.counters.closedForAbuse++;
      this.counters.closedBy['slow-reader']++;
      c.ws.terminate();
      this.drop(c);
      return;
    }
    c.ws.send(bytes, { binary: false });
    this.counters.relayed++;
  }

  private dropped(why: DropReason): void {
    this.counters.dropped++;
    this.counters.droppedBy[why]++;
  }

  /** The server closes `c` for `why` (once), and forgets it at once. */
  private closeFor(c: Client, why: CloseReason, code: number): void {
    if (!this.clients.has(c)) return;
    this.closed(c, why);
    c.ws.close(code, why);
    this.drop(c);
  }

  /** Count a close (the hub's or ws's own) once per socket. */
  private closed(c: Client, why: CloseReason): void {
    if (!this.clients.has(c)) return;
    this.counters.closedBy[why]++;
    if (ABUSE.has(why)) this.counters.closedForAbuse++;
    if (why === 'too-big' || why === 'protocol') this.drop(c);
  }

  private leave(c: Client, topic: string): void {
    this.listings.withdraw(c, topic);
    c.topics.delete(topic);
    const subs = this.topics.get(topic);
    if (!subs) return;
    subs.delete(c);
    if (subs.size === 0) this.topics.delete(topic);
  }

  private drop(c: Client): void {
    if (!this.clients.delete(c)) return;
    c.from.sockets--;
    for (const t of [...c.topics]) this.leave(c, t);
  }

  /** Liveness from pongs only: a socket that did not answer the previous ping goes. */
  private sweep(): void {
    this.pruneAddresses(Date.now());
    for (const c of [...this.clients]) {
      this.guard(c, () => {
        if (!c.alive) {
          this.closed(c, 'ping-timeout');
          c.ws.close(CloseCode.PING_TIMEOUT, 'ping timeout');
          c.ws.terminate();
          this.drop(c);
          return;
        }
        c.alive = false;
        if (c.ws.readyState === WebSocket.OPEN) c.ws.ping();
      });
    }
  }

  /**
   * Forget addresses with no socket whose buckets have refilled (nothing left to remember); with
   * `evenIfUsed`, every address with no socket (the map is at its bound).
   */
  private pruneAddresses(now: number, evenIfUsed = false): void {
    for (const [k, a] of this.perAddress) if (a.sockets === 0 && (evenIfUsed || (a.frames.full(now) && a.bytes.full(now)))) this.perAddress.delete(k);
  }
}
