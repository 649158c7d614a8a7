// Builds tests/support/yjs-probe.ts with Vite into tests/.tmp/probe (with an index.html), to be
// served by a real app server (startServer({ root })) so the page's WebSocket goes to our hub.
// (A page fulfilled by Playwright routing may not open loopback sockets: Local Network Access.)

import type { Page } from '@playwright/test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

export const PROBE_ROOT = fileURLToPath(new URL('../.tmp/probe', import.meta.url));

export async function buildProbe(): Promise<string> {
  await build({
    configFile: false,
    logLevel: 'warn',
    build: {
      outDir: PROBE_ROOT,
      emptyOutDir: true,
      target: 'es2022',
      lib: { entry: fileURLToPath(new URL('./yjs-probe.ts', import.meta.url)), formats: ['es'], fileName: () => 'probe.js' },
    },
  });
  writeFileSync(join(PROBE_ROOT, 'index.html'), '<!doctype html><title>probe</title><script type="module" src="/probe.js"></script>');
  return PROBE_ROOT;
}

/** Open the probe page: `globalThis.yjsProbe = { Y, WebrtcProvider }`, straight from the packages. */
export async function openProbe(page: Page, baseUrl: string): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.waitForFunction(() => 'yjsProbe' in globalThis);
}
