// Starts the real app server (built dist/ + signaling hub) in-process on a free loopback port.

import { fileURLToPath } from 'node:url';
import { createAppServer, type AppServer } from '../../server/http.ts';
import type { SignalingOptions } from '../../server/signaling.ts';

export interface RunningServer {
  url: string;
  app: AppServer;
  close(): Promise<void>;
}

/** `host` defaults to loopback; the network-namespace tests bind it to the veth address. */
export async function startServer(opts: { signaling?: Partial<SignalingOptions>; root?: string; host?: string } = {}): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  const app = createAppServer({ root: opts.root ?? fileURLToPath(new URL('../../dist', import.meta.url)), ...(opts.signaling ? { signaling: opts.signaling } : {}) });
  await new Promise<void>((resolve) => app.server.listen(0, host, resolve));
  const addr = app.server.address();
  if (typeof addr !== 'object' || !addr) throw new Error('server has no address');
  return { url: `http://${host}:${addr.port}`, app, close: () => app.close() };
}
