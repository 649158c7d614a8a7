// A WebSocket relay in the test process between one page and our signaling server, that can hold
// what the page sends (a slow uplink) and release it later, in order. With it a test produces a
// message interleaving that otherwise happens only by chance: two peers' y-webrtc announces that
// cross (src/room/stuck-links.ts). Test code only.

import { WebSocket, WebSocketServer, type RawData } from 'ws';

export interface HoldProxy {
  /** ws://… URL to give the page instead of the server's. */
  readonly url: string;
  /** Hold the page's messages of this type (y-webrtc: 'publish') from now on; others pass. */
  hold(type: string): void;
  /** Send everything held, in order, and stop holding. */
  release(): void;
  /** Messages held now, parsed (JSON). */
  held(): unknown[];
  close(): Promise<void>;
}

export async function startHoldProxy(upstreamUrl: string): Promise<HoldProxy> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  let holding: string | null = null;
  const queue: { up: WebSocket; data: RawData; binary: boolean }[] = [];
  wss.on('connection', (client, req) => {
    const up = new WebSocket(upstreamUrl.replace(/\/signal$/, '') + (req.url ?? '/signal'));
    const early: { data: RawData; binary: boolean }[] = [];
    up.on('open', () => {
      for (const m of early.splice(0)) forward(m.data, m.binary);
    });
    const forward = (data: RawData, binary: boolean): void => {
      if (holding !== null && messageType(data) === holding) queue.push({ up, data, binary });
      else up.send(data, { binary });
    };
    client.on('message', (data, binary) => {
      if (up.readyState === WebSocket.OPEN) forward(data, binary);
      else early.push({ data, binary });
    });
    up.on('message', (data, binary) => client.readyState === WebSocket.OPEN && client.send(data, { binary }));
    client.on('close', () => up.close());
    up.on('close', () => client.close());
    client.on('error', () => up.close());
    up.on('error', () => client.close());
  });
  const port = (wss.address() as { port: number }).port;
  return {
    url: `ws://127.0.0.1:${port}/signal`,
    hold: (type) => { holding = type; },
    release: () => {
      holding = null;
      for (const m of queue.splice(0)) if (m.up.readyState === WebSocket.OPEN) m.up.send(m.data, { binary: m.binary });
    },
    held: () => queue.map((m) => JSON.parse(m.data.toString()) as unknown),
    close: () => new Promise<void>((resolve) => {
      for (const c of wss.clients) c.terminate();
      wss.close(() => resolve());
    }),
  };
}

function messageType(data: RawData): string | null {
  try {
    const m = JSON.parse(data.toString()) as { type?: unknown };
    return typeof m.type === 'string' ? m.type : null;
  } catch {
    return null;
  }
}
