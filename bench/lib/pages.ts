// Serves the built bench pages (bench/out, from bench/vite.config.ts) with the app server's
// cross-origin-isolation headers, on a free loopback port.

import { fileURLToPath } from 'node:url';
import { createAppServer } from '../../server/http.ts';

export async function serveBenchPages(): Promise<{ url: string; close(): Promise<void> }> {
  const app = createAppServer({ root: fileURLToPath(new URL('../out', import.meta.url)) });
  await new Promise<void>((r) => app.server.listen(0, '127.0.0.1', r));
  const addr = app.server.address();
  if (typeof addr !== 'object' || !addr) throw new Error('bench page server has no address');
  return { url: `http://127.0.0.1:${addr.port}`, close: () => app.close() };
}
