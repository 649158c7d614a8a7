// Node: how much of this virtual machine's CPU its host takes away ("steal" in /proc/stat), for
// the CI run and the browser suite's reporter. Audio threads cannot make up time the hypervisor
// does not give them: with ~20 % stolen, Chromium's own fake audio devices fall behind (a sender
// 280 quanta a second where 375 are due) and the suite's timing tests fail at code whose CI had
// passed (docs/TESTING.md, "A host that steals CPU"). `npx tsx scripts/host-steal.ts wait` blocks
// until a quiet window (or gives up and says so); the reporter (tests/support/steal-reporter.ts)
// prints the steal during each failed test.

import { readFileSync } from 'node:fs';

/** CPU time counters of the whole machine (jiffies), as /proc/stat's first line gives them. */
export interface CpuTimes {
  /** user + nice + system + idle + iowait + irq + softirq + steal. */
  total: number;
  idle: number;
  steal: number;
}

/** The machine's counters now; null where /proc/stat is not there (not Linux) or has no steal column. */
export function cpuTimes(): CpuTimes | null {
  let text: string;
  try {
    text = readFileSync('/proc/stat', 'utf8');
  } catch {
    return null;
  }
  const line = text.split('\n', 1)[0] ?? '';
  const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (!line.startsWith('cpu ') || f.length < 8 || f.some((x) => !Number.isFinite(x))) return null;
  return { total: f.reduce((s, x) => s + x, 0), idle: f[3]!, steal: f[7]! };
}

/** Percent of the machine's CPU time the host took between two readings (0 if none passed). */
export function stealPercent(a: CpuTimes, b: CpuTimes): number {
  const dt = b.total - a.total;
  return dt > 0 ? (100 * (b.steal - a.steal)) / dt : 0;
}

/** Steal over `ms` from now (null where it cannot be read). */
export async function stealOver(ms: number): Promise<number | null> {
  const a = cpuTimes();
  await new Promise((r) => setTimeout(r, ms));
  const b = cpuTimes();
  return a && b ? stealPercent(a, b) : null;
}

/** A window with less than this much steal is quiet. */
export const QUIET_PERCENT = 3;
const WINDOW_MS = 20_000;

/** Wait until a WINDOW_MS window has less than QUIET_PERCENT steal, at most `maxMinutes`; prints each window. */
export async function waitForQuietHost(maxMinutes: number): Promise<void> {
  const until = Date.now() + maxMinutes * 60_000;
  for (;;) {
    const s = await stealOver(WINDOW_MS);
    if (s === null) return console.log('host steal: /proc/stat has no steal figure here; not waiting');
    if (s < QUIET_PERCENT) return console.log(`host steal: ${s.toFixed(1)} % over ${WINDOW_MS / 1000} s: quiet`);
    if (Date.now() >= until) {
      return console.log(`host steal: still ${s.toFixed(1)} % after ${maxMinutes} min: running anyway; timing tests may fail for it (docs/TESTING.md)`);
    }
    console.log(`host steal: ${s.toFixed(1)} % over ${WINDOW_MS / 1000} s: the host is taking CPU away; waiting for a quiet window`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [cmd, arg] = process.argv.slice(2);
  if (cmd === 'wait') {
    const minutes = Number(arg ?? 30);
    if (!(minutes >= 0)) throw new Error(`host-steal wait: minutes must be a number ≥ 0, got ${arg}`);
    await waitForQuietHost(minutes);
  } else if (cmd === 'now') {
    const s = await stealOver(Number(arg ?? 10) * 1000);
    console.log(s === null ? 'host steal: not measurable here' : `host steal: ${s.toFixed(1)} %`);
  } else {
    console.error('usage: npx tsx scripts/host-steal.ts wait [max minutes] | now [seconds]');
    process.exit(2);
  }
}
