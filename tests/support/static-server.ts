// A plain static file server over dist/ that sends no COOP/COEP/CORP headers, like a host whose
// headers cannot be configured (GitHub Pages, a NAS). Only the service worker can make the page
// cross-origin isolated there. `swTransform` rewrites /sw.js as served, so a test can publish a
// "new version" of the service worker without a second build.

import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};

export interface StaticServer {
  url: string;
  /** Applied to the text of /sw.js from now on (identity by default). */
  swTransform: (text: string) => string;
  /** How many times /sw.js was served. */
  swFetches: number;
  close(): Promise<void>;
}

export async function startStaticServer(root = fileURLToPath(new URL('../../dist', import.meta.url))): Promise<StaticServer> {
  const state = { swTransform: (t: string) => t, swFetches: 0 };
  const server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const rel = path === '/' ? 'index.html' : normalize(path).replace(/^([/\\]|\.\.)+/, '');
      try {
        let body = await readFile(join(root, rel));
        if (rel === 'sw.js') {
          state.swFetches++;
          body = Buffer.from(state.swTransform(body.toString('utf8')));
        }
        res.setHeader('Content-Type', TYPES[extname(rel)] ?? 'application/octet-stream');
        res.end(body);
      } catch {
        res.statusCode = 404;
        res.end('not found\n');
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  if (typeof addr !== 'object' || !addr) throw new Error('static server has no address');
  return {
    url: `http://127.0.0.1:${addr.port}`,
    get swTransform() {
      return state.swTransform;
    },
    set swTransform(f: (text: string) => string) {
      state.swTransform = f;
    },
    get swFetches() {
      return state.swFetches;
    },
    close: () =>
      new Promise((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
