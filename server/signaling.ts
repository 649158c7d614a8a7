// Tutti's signaling hub: y-webrtc's protocol (subscribe / unsubscribe / publish / ping) over
// WebSocket, hardened: every frame is parsed under guard, and misbehaviour closes that one socket
// with a clear code instead of crashing the process or disturbing other rooms.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { CloseCode, MAX_ROOM_TITLE, type OpenRoom, type SignalingClientMessage, type SignalingServerMessage } from '../src/shared/signaling-protocol.ts';

export interface SignalingOptions {
  /** Largest accepted frame in bytes. */
  maxPayload: number;
  maxTopicsPerSocket: number;
  maxTopicLength: number;
  /** Messages per second per socket (token bucket, burst = 2 s worth). */
  rateLimit: number;
  /** A socket that answers no ping within this long is closed. */
  pingTimeoutMs: number;
  /** Allowed Origin headers; empty = any. */
  allowedOrigins: string[];
  /** Keep the open-rooms list (GET /rooms); false = `tutti-announce` is dropped and the list is empty. */
  openRooms: boolean;
  /** Rooms one socket may list at once (a further announce is dropped). */
  maxAnnouncedPerSocket: number;
  /** Rooms the list holds at most (a further new room is dropped). */
  maxOpenRooms: number;
}

export const DEFAULT_SIGNALING_OPTIONS: SignalingOptions = {
  maxPayload: 64 * 1024,
  maxTopicsPerSocket: 32,
  maxTopicLength: 256,
  rateLimit: 200,
  pingTimeoutMs: 30_000,
  allowedOrigins: [],
  openRooms: true,
  maxAnnouncedPerSocket: 4,
  maxOpenRooms: 200,
};

interface Client {
  ws: WebSocket;
  topics: Set<string>;
  tokens: number;
  lastRefill: number;
  alive: boolean;
  /** Topics this socket lists (each also in `topics`). */
  announced: Set<string>;
}

interface Listing {
  title: string;
  locked: boolean;
}

export interface SignalingCounters {
  sockets: number;
  topics: number;
  messages: number;
  dropped: number;
  closedForAbuse: number;
  /** Rooms on the open-rooms list. */
  openRooms: number;
}

export class SignalingHub {
  private readonly wss: WebSocketServer;
  private readonly topics = new Map<string, Set<Client>>();
  private readonly clients = new Set<Client>();
  /** The open-rooms list: per topic, the sockets listing it (the newest one's title is shown). */
  private readonly listings = new Map<string, Map<Client, Listing>>();
  private readonly opts: SignalingOptions;
  private readonly pingTimer: ReturnType<typeof setInterval>;
  readonly counters: SignalingCounters = { sockets: 0, topics: 0, messages: 0, dropped: 0, closedForAbuse: 0, openRooms: 0 };

  constructor(opts: Partial<SignalingOptions> = {}) {
    this.opts = { ...DEFAULT_SIGNALING_OPTIONS, ...opts };
    this.wss = new WebSocketServer({ noServer: true, maxPayload: this.opts.maxPayload });
    this.wss.on('connection', (ws) => this.onConnection(ws));
    this.pingTimer = setInterval(() => this.sweep(), this.opts.pingTimeoutMs / 2);
    this.pingTimer.unref();
  }

  /** Route an HTTP upgrade here (any path: y-webrtc clients connect to the server's root). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const origin = req.headers.origin;
    if (this.opts.allowedOrigins.length > 0 && (!origin || !this.opts.allowedOrigins.includes(origin))) {
      socket.write('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      socket.destroy();
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit('connection', ws, req));
  }

  get openRoomsEnabled(): boolean {
    return this.opts.openRooms;
  }

  snapshot(): SignalingCounters {
    return { ...this.counters, sockets: this.clients.size, topics: this.topics.size, openRooms: this.listings.size };
  }

  /**
   * The open-rooms list (GET /rooms): rooms that a subscribed member announced, busiest first. A
   * room leaves it when its last announcing socket unsubscribes, unannounces or goes away.
   */
  openRooms(): OpenRoom[] {
    const out: OpenRoom[] = [];
    for (const [room, by] of this.listings) {
      let last: Listing | undefined;
      for (const l of by.values()) last = l;
      if (last) out.push({ room, title: last.title, locked: last.locked, connected: this.topics.get(room)?.size ?? 0 });
    }
    return out.sort((a, b) => b.connected - a.connected || (a.room < b.room ? -1 : 1));
  }

  close(): void {
    clearInterval(this.pingTimer);
    for (const c of this.clients) c.ws.terminate();
    this.wss.close();
  }

  private onConnection(ws: WebSocket): void {
    const client: Client = { ws, topics: new Set(), tokens: this.opts.rateLimit * 2, lastRefill: Date.now(), alive: true, announced: new Set() };
    this.clients.add(client);
    ws.on('pong', () => (client.alive = true));
    ws.on('message', (raw, isBinary) => this.onMessage(client, raw, isBinary));
    ws.on('error', () => {}); // e.g. oversized frame: ws closes with 1009 by itself
    ws.on('close', () => this.drop(client));
  }

  private onMessage(client: Client, raw: RawData, isBinary: boolean): void {
    // Frames already buffered when we closed a socket still arrive: a dropped client is done.
    if (!this.clients.has(client)) return;
    if (!this.takeToken(client)) {
      this.abuse(client, CloseCode.RATE_LIMITED, 'rate limit exceeded');
      return;
    }
    client.alive = true;
    let msg: unknown;
    try {
      msg = JSON.parse(isBinary ? Buffer.from(raw as Buffer).toString('utf8') : raw.toString());
    } catch {
      this.counters.dropped++;
      return;
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
      this.counters.dropped++;
      return;
    }
    this.counters.messages++;
    const m = msg as SignalingClientMessage;
    switch (m.type) {
      case 'subscribe': {
        if (!Array.isArray(m.topics)) return void this.counters.dropped++;
        for (const t of m.topics) {
          if (typeof t !== 'string' || t.length === 0 || t.length > this.opts.maxTopicLength) continue;
          if (!client.topics.has(t) && client.topics.size >= this.opts.maxTopicsPerSocket) {
            this.abuse(client, CloseCode.TOO_MANY_TOPICS, 'too many topics');
            return;
          }
          client.topics.add(t);
          let subs = this.topics.get(t);
          if (!subs) this.topics.set(t, (subs = new Set()));
          subs.add(client);
        }
        return;
      }
      case 'unsubscribe': {
        if (!Array.isArray(m.topics)) return void this.counters.dropped++;
        for (const t of m.topics) if (typeof t === 'string') this.leave(client, t);
        return;
      }
      case 'publish': {
        if (typeof m.topic !== 'string') return void this.counters.dropped++;
        const subs = this.topics.get(m.topic);
        if (!subs) return;
        const out: SignalingServerMessage = { ...m, type: 'publish', topic: m.topic, clients: subs.size };
        const text = JSON.stringify(out);
        for (const c of subs) this.send(c, text);
        return;
      }
      case 'ping':
        this.send(client, JSON.stringify({ type: 'pong' } satisfies SignalingServerMessage));
        return;
      case 'tutti-announce':
        if (!this.announce(client, m)) this.counters.dropped++;
        return;
      case 'tutti-unannounce':
        if (typeof m.topic !== 'string') return void this.counters.dropped++;
        this.unannounce(client, m.topic);
        return;
      default:
        m satisfies never;
        this.counters.dropped++;
    }
  }

  private takeToken(c: Client): boolean {
    const now = Date.now();
    const cap = this.opts.rateLimit * 2;
    c.tokens = Math.min(cap, c.tokens + ((now - c.lastRefill) / 1000) * this.opts.rateLimit);
    c.lastRefill = now;
    if (c.tokens < 1) return false;
    c.tokens -= 1;
    return true;
  }

  private send(c: Client, text: string): void {
    if (c.ws.readyState === WebSocket.OPEN) c.ws.send(text);
  }

  private abuse(c: Client, code: number, reason: string): void {
    if (!this.clients.has(c)) return;
    this.counters.closedForAbuse++;
    c.ws.close(code, reason);
    this.drop(c);
  }

  /** Returns false (the message is dropped) when the announce is malformed or over a limit. */
  private announce(c: Client, m: { topic?: unknown; title?: unknown; locked?: unknown }): boolean {
    const { topic, title, locked } = m;
    if (!this.opts.openRooms || typeof topic !== 'string' || typeof title !== 'string' || typeof locked !== 'boolean') return false;
    // Only a member can list a room: the socket must be subscribed to its topic.
    if (!c.topics.has(topic)) return false;
    if (!c.announced.has(topic) && c.announced.size >= this.opts.maxAnnouncedPerSocket) return false;
    let by = this.listings.get(topic);
    if (!by) {
      if (this.listings.size >= this.opts.maxOpenRooms) return false;
      this.listings.set(topic, (by = new Map()));
    }
    // Control characters out, whitespace collapsed; an empty title shows the room's name.
    const clean = title.replace(/[\u0000-\u001f\u007f]/g, ' ').replace(/\s+/g, ' ').trim().slice(0, MAX_ROOM_TITLE) || topic.slice(0, MAX_ROOM_TITLE);
    by.delete(c); // re-insert: the newest announcement's title is the one shown
    by.set(c, { title: clean, locked });
    c.announced.add(topic);
    return true;
  }

  private unannounce(c: Client, topic: string): void {
    if (!c.announced.delete(topic)) return;
    const by = this.listings.get(topic);
    by?.delete(c);
    if (by?.size === 0) this.listings.delete(topic);
  }

  private leave(c: Client, topic: string): void {
    this.unannounce(c, topic);
    c.topics.delete(topic);
    const subs = this.topics.get(topic);
    if (!subs) return;
    subs.delete(c);
    if (subs.size === 0) this.topics.delete(topic);
  }

  private drop(c: Client): void {
    if (!this.clients.delete(c)) return;
    for (const t of [...c.topics]) this.leave(c, t);
  }

  private sweep(): void {
    for (const c of this.clients) {
      if (!c.alive) {
        c.ws.close(CloseCode.PING_TIMEOUT, 'ping timeout');
        c.ws.terminate();
        this.drop(c);
        continue;
      }
      c.alive = false;
      c.ws.ping();
    }
  }
}
