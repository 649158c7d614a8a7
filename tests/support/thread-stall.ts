// Node side of tests/e2e/stall.spec.ts: hold some threads of one browser off the CPU while others
// run, the way a loaded 2-core machine preempts them. The browser's audio and network threads are
// pinned to core 1 and its dedicated workers (Tutti's network worker among them) to core 0; then a
// real-time (SCHED_FIFO) busy loop on core 1 holds every thread pinned there for a given time.
// Linux only, as root: needs two cores, taskset and chrt (util-linux) and ps (procps).

import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { availableParallelism } from 'node:os';
import type { Browser } from '@playwright/test';

/** Why threads cannot be held here, or null when they can. */
export function threadStallUnavailable(): string | null {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (availableParallelism() < 2) return `one core (${availableParallelism()}): nothing to pin the worker away to`;
  for (const [cmd, ...args] of [['taskset', '-c', '0', 'true'], ['chrt', '-f', '1', 'true'], ['ps', '-T', '-p', String(process.pid)]] as const) {
    const r = spawnSync(cmd, args);
    if (r.error || r.status !== 0) return `\`${cmd} ${args.join(' ')}\` fails: ${r.error?.message ?? r.stderr.toString().trim()}`;
  }
  return null;
}

/** The pids of `browser`'s renderer processes (Chrome DevTools Protocol, SystemInfo.getProcessInfo). */
export async function rendererPids(browser: Browser): Promise<number[]> {
  const cdp = await browser.newBrowserCDPSession();
  try {
    const info = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: { type: string; id: number }[] };
    return info.processInfo.filter((p) => p.type === 'renderer').map((p) => p.id);
  } finally {
    await cdp.detach();
  }
}

/**
 * Pin the threads of `pids` that carry audio and network work (WebRTC's, the audio device and
 * worklet threads, any real-time one) to core 1, and dedicated workers to core 0; the rest stay
 * free on both cores, so that after a hold the catch-up is not squeezed onto one core. Returns the
 * worker threads' ids.
 */
export function pinAudioAndNetwork(pids: number[]): number[] {
  const workers: number[] = [];
  for (const pid of pids) {
    const ps = spawnSync('ps', ['-T', '-o', 'spid=,cls=,comm=', '-p', String(pid)]).stdout.toString();
    for (const line of ps.split('\n')) {
      const m = /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line);
      if (!m) continue;
      const [, tid, cls, name] = m as unknown as [string, string, string, string];
      if (name.startsWith('DedicatedWorker')) {
        spawnSync('taskset', ['-p', '-c', '0', tid]);
        workers.push(Number(tid));
      } else if (/^(WebRTC|Audio|Realtime)/.test(name) || cls === 'RR' || cls === 'FF') {
        spawnSync('taskset', ['-p', '-c', '1', tid]);
      }
    }
  }
  return workers;
}

/** A real-time busy loop on core 1 that holds the core for `hold(ms)` at a time, idle in between. */
export class CoreHolder {
  private readonly child: ChildProcessWithoutNullStreams;
  private waiting: (() => void)[] = [];

  constructor() {
    const script = `
      process.stdin.setEncoding('utf8');
      let buf = '';
      process.stdin.on('data', (d) => {
        buf += d;
        for (let i; (i = buf.indexOf('\\n')) >= 0; ) {
          const ms = Number(buf.slice(0, i)); buf = buf.slice(i + 1);
          const t = performance.now(); while (performance.now() - t < ms) {}
          process.stdout.write('held\\n');
        }
      });`;
    this.child = spawn('chrt', ['-f', '99', 'taskset', '-c', '1', process.execPath, '-e', script]);
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (d: string) => {
      for (let n = d.split('held').length - 1; n > 0; n--) this.waiting.shift()?.();
    });
  }

  /** Hold core 1 for `ms` milliseconds; resolves when it is free again. */
  hold(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.child.stdin.write(`${ms}\n`);
    });
  }

  close(): void {
    this.child.kill('SIGKILL');
  }
}
