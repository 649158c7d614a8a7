// The app's HTTP(S) server: serves the built app (dist/) with the cross-origin-isolation headers
// SharedArrayBuffer needs, a health endpoint, the page's config (/config.json: ICE servers), the
// open-rooms list (/rooms), and
// hands WebSocket upgrades to the signaling hub. With `tls` it is HTTPS and signaling is wss.

import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { extname, join, normalize, resolve } from 'node:path';
import type { ClientConfig } from '../src/shared/ice-servers.ts';
import type { SignalingOptions } from './signaling-limits.ts';
import { SignalingHub } from './signaling.ts';

/** Headers that make the page crossOriginIsolated (COOP + COEP), on every response. */
export const ISOLATION_HEADERS: Record<string, string> = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.wav': 'audio/wav',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
};

export interface AppServerOptions {
  /** Folder of the built app; null = signaling only. */
  root: string | null;
  signaling?: Partial<SignalingOptions>;
  /** PEM key and certificate: serve HTTPS (and wss) instead of HTTP. */
  tls?: { key: string; cert: string };
  /** Served as /config.json; default: no ICE servers. */
  clientConfig?: ClientConfig;
  /**
   * Use this hub instead of creating one (`signaling` is then ignored), so two servers on two ports
   * share one set of rooms: the browser tests serve the production and the test build side by side.
   * close() leaves a hub it did not create open. `npm start` never passes one.
   */
  hub?: SignalingHub;
}

export interface AppServer {
  server: Server;
  hub: SignalingHub;
  close(): Promise<void>;
}

export function createAppServer(opts: AppServerOptions): AppServer {
  const hub = opts.hub ?? new SignalingHub(opts.signaling);
  const root = opts.root ? resolve(opts.root) : null;
  const config = JSON.stringify(opts.clientConfig ?? { iceServers: [] });
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    // One request's failure (e.g. a file vanishing mid-read) must not end the process.
    try {
      handle(req, res, root, hub, config);
    } catch (err) {
      console.error('http: request failed:', err);
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    }
  };
  const server: Server = opts.tls ? createHttpsServer({ key: opts.tls.key, cert: opts.tls.cert }, onRequest) : createServer(onRequest);
  server.on('upgrade', (req, socket, head) => hub.handleUpgrade(req, socket, head));
  return {
    server,
    hub,
    close: () =>
      new Promise((done) => {
        if (!opts.hub) hub.close();
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

function handle(req: IncomingMessage, res: ServerResponse, root: string | null, hub: SignalingHub, config: string): void {
  for (const [k, v] of Object.entries(ISOLATION_HEADERS)) res.setHeader(k, v);
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/healthz') {
    res.setHeader('Content-Type', 'application/json');
    // The hub's gauges, counters and the limits in force (docs/PROTOCOL.md §3.3).
    res.end(JSON.stringify({ ok: true, signaling: hub.snapshot() }));
    return;
  }
  if (url.pathname === '/rooms') {
    // The open-rooms list: rooms a member chose to list, while someone who listed it is connected.
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Cache-Control', 'no-store');
    res.end(req.method === 'HEAD' ? undefined : JSON.stringify({ enabled: hub.openRoomsEnabled, rooms: hub.openRooms() }));
    return;
  }
  if (url.pathname === '/config.json') {
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Cache-Control', 'no-cache');
    res.end(req.method === 'HEAD' ? undefined : config);
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.statusCode = 405;
    res.end();
    return;
  }
  if (!root) {
    res.statusCode = 404;
    res.end('signaling server only\n');
    return;
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(url.pathname);
  } catch {
    res.statusCode = 400;
    res.end('malformed URL\n');
    return;
  }
  let path = normalize(decoded).replace(/^(\.\.[/\\])+/, '');
  let file = join(root, path);
  if (!file.startsWith(root)) {
    res.statusCode = 403;
    res.end();
    return;
  }
  if (!existsSync(file) || statSync(file).isDirectory()) {
    // Client-side routes (e.g. /room/name) get the app shell.
    path = '/index.html';
    file = join(root, path);
    if (!existsSync(file)) {
      res.statusCode = 404;
      res.end('app not built: run `npm run build`\n');
      return;
    }
  }
  res.setHeader('Content-Type', MIME[extname(file)] ?? 'application/octet-stream');
  res.setHeader('Cache-Control', path === '/index.html' || path.endsWith('sw.js') || path.endsWith('.webmanifest') ? 'no-cache' : 'public, max-age=3600');
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const stream = createReadStream(file);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}
