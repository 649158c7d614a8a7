// Page-side client of the signaling server, speaking y-webrtc's protocol: subscribe to topics,
// publish to them, ping to stay alive, reconnect with back-off and re-subscribe.

import type { SignalingClientMessage, SignalingServerMessage } from '../shared/signaling-protocol.ts';

const PING_MS = 20_000;

export type ConnectionState = 'connecting' | 'open' | 'closed';

export class SignalingClient {
  private ws: WebSocket | null = null;
  private readonly topics = new Set<string>();
  private pingTimer: ReturnType<typeof setInterval> | null = null;
  private retryMs = 500;
  private closed = false;
  state: ConnectionState = 'connecting';
  onmessage: (topic: string, data: unknown) => void = () => {};
  /** Called after every (re)connection, once subscriptions are sent. */
  onopen: () => void = () => {};
  onstatechange: (s: ConnectionState) => void = () => {};

  constructor(readonly url: string) {
    this.connect();
  }

  static defaultUrl(): string {
    return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/signal`;
  }

  subscribe(topic: string): void {
    this.topics.add(topic);
    this.send({ type: 'subscribe', topics: [topic] });
  }

  unsubscribe(topic: string): void {
    this.topics.delete(topic);
    this.send({ type: 'unsubscribe', topics: [topic] });
  }

  publish(topic: string, data: unknown): void {
    this.send({ type: 'publish', topic, data });
  }

  close(): void {
    this.closed = true;
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.ws?.close();
    this.setState('closed');
  }

  private connect(): void {
    if (this.closed) return;
    this.setState('connecting');
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.onopen = () => {
      this.retryMs = 500;
      this.setState('open');
      if (this.topics.size) this.send({ type: 'subscribe', topics: [...this.topics] });
      this.pingTimer = setInterval(() => this.send({ type: 'ping' }), PING_MS);
      this.onopen();
    };
    ws.onmessage = (ev) => {
      let m: SignalingServerMessage;
      try {
        m = JSON.parse(String(ev.data)) as SignalingServerMessage;
      } catch {
        return;
      }
      if (m.type === 'publish' && typeof m.topic === 'string') this.onmessage(m.topic, m.data);
    };
    ws.onclose = () => {
      if (this.pingTimer) clearInterval(this.pingTimer);
      this.pingTimer = null;
      if (this.closed) return;
      this.setState('connecting');
      setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(10_000, this.retryMs * 2);
    };
  }

  private send(m: SignalingClientMessage): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(m));
  }

  private setState(s: ConnectionState): void {
    if (s === this.state) return;
    this.state = s;
    this.onstatechange(s);
  }
}
