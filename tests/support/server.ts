// Starts the real app server (a built app + signaling hub) in-process on a free loopback port:
// the production build (dist/, what users run) by default, or the test build (dist-test/, with
// taps and URL test switches compiled in) for the specs that read them. Both builds can be served
// at once, each on its own port with one shared hub, so their pages meet in the same rooms.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAppServer, type AppServer } from '../../server/http.ts';
import type { SignalingOptions } from '../../server/signaling.ts';

/** `production`: dist/ (`npm run build`). `test`: dist-test/ (`npm run build:test`). */
export type Build = 'production' | 'test';

export const BUILD_ROOT: Readonly<Record<Build, string>> = {
  production: fileURLToPath(new URL('../../dist', import.meta.url)),
  test: fileURLToPath(new URL('../../dist-test', import.meta.url)),
};

export interface RunningServer {
  /** Origin of the first build asked for (or of `root`). */
  url: string;
  /** Origin of each build served; all of them share `app.hub`. */
  urls: Partial<Record<Build, string>>;
  /** The first server (its hub is the shared one). */
  app: AppServer;
  close(): Promise<void>;
}

/**
 * `build` defaults to production; a list serves each build on its own port (the first one's server
 * owns the hub). `root` serves another folder instead. `host` defaults to loopback; the
 * network-namespace tests bind it to the veth address.
 */
export async function startServer(opts: { signaling?: Partial<SignalingOptions>; root?: string; host?: string; build?: Build | readonly Build[] } = {}): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  const builds: readonly Build[] = opts.build === undefined ? ['production'] : typeof opts.build === 'string' ? [opts.build] : opts.build;
  if (builds.length === 0) throw new Error('startServer: no build to serve');
  if (opts.root !== undefined && builds.length > 1) throw new Error('startServer: `root` serves one folder');
  const apps: AppServer[] = [];
  const urls: Partial<Record<Build, string>> = {};
  let url = '';
  try {
    for (const build of builds) {
      // A missing dist/ shows in the page ("app not built"); a spec that asks for the test build
      // by name is told at once (a plain `npx playwright test` after `npm run build` lacks it).
      if (build === 'test' && opts.root === undefined && !existsSync(join(BUILD_ROOT.test, 'index.html'))) {
        throw new Error(`the test build is missing (${BUILD_ROOT.test}): run \`npm run build:test\` (npm run test:browser makes both builds)`);
      }
      const first = apps[0];
      const app = createAppServer({
        root: opts.root ?? BUILD_ROOT[build],
        ...(first ? { hub: first.hub } : opts.signaling ? { signaling: opts.signaling } : {}),
      });
      apps.push(app);
      await new Promise<void>((resolve) => app.server.listen(0, host, resolve));
      const addr = app.server.address();
      if (typeof addr !== 'object' || !addr) throw new Error('server has no address');
      urls[build] = `http://${host}:${addr.port}`;
      url ||= urls[build];
    }
  } catch (err) {
    await closeAll(apps);
    throw err;
  }
  return { url, urls, app: apps[0]!, close: () => closeAll(apps) };
}

/** The sharing servers first: the hub's owner closes it last. */
async function closeAll(apps: AppServer[]): Promise<void> {
  for (const app of [...apps].reverse()) await app.close();
}
