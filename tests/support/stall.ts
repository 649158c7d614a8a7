// Test only: a stall of one browser process tree, as a busy machine gives one (every thread of
// that browser stops: its audio output, workers and network). Playwright starts each browser as
// the leader of its own process group, so a signal to the group reaches every Chromium process of
// that peer and no other.

import { readFileSync } from 'node:fs';
import type { Browser } from '@playwright/test';

const groups = new WeakMap<Browser, number>();

/** The process group of `browser` (its browser process's, found over CDP, as Playwright's Browser hides its process). */
async function groupOf(browser: Browser): Promise<number> {
  const known = groups.get(browser);
  if (known !== undefined) return known;
  const cdp = await browser.newBrowserCDPSession();
  const info = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: { type: string; id: number }[] };
  await cdp.detach();
  const pid = info.processInfo.find((p) => p.type === 'browser')?.id;
  if (pid === undefined) throw new Error('stall: no browser process in SystemInfo.getProcessInfo');
  // /proc/PID/stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces, so read after the last ')'.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  if (pgrp !== pid) throw new Error(`stall: browser process ${pid} does not lead its process group (${pgrp}); stopping the group would stop others`);
  groups.set(browser, pgrp);
  return pgrp;
}

/** Stops `browser`'s processes for `ms` and lets them go on; resolves with when (machine clock, ms) the stall began and ended. */
export async function stall(browser: Browser, ms: number): Promise<{ fromMs: number; toMs: number }> {
  const pid = await groupOf(browser);
  const fromMs = performance.timeOrigin + performance.now();
  process.kill(-pid, 'SIGSTOP');
  await new Promise((r) => setTimeout(r, ms));
  process.kill(-pid, 'SIGCONT');
  return { fromMs, toMs: performance.timeOrigin + performance.now() };
}
