// Node, run by hand as root: take CPU away from everything else on this machine the way a busy
// host's steal does, to reproduce on a quiet machine what the suite does on a starved one
// (docs/TESTING.md, "A host that steals CPU"). On every core, a real-time (SCHED_FIFO) busy loop
// runs `percent` % of the time, in random bursts averaging `burst` ms: nothing of ours, the audio
// threads included, runs meanwhile. Stop it with Ctrl-C (or kill the process group).
//
//   npx tsx scripts/emulate-steal.ts [percent=20] [burst ms=5]
//
// Needs chrt and taskset (util-linux). The kernel keeps 5 % of each second for ordinary tasks
// (sched_rt_runtime_us), so even 100 cannot lock the machine.

import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

const [mode, ...rest] = process.argv.slice(2);

if (mode === '--core') {
  // One core's loop (already pinned and real-time): busy a random 0.5–1.5 × burst, then sleep.
  const [percent, burst] = rest.map(Number) as [number, number];
  const periodMs = (burst * 100) / percent;
  const spin = (): void => {
    const busy = burst * (0.5 + Math.random());
    const t0 = performance.now();
    while (performance.now() - t0 < busy) {
      /* taken from everything else */
    }
    setTimeout(spin, Math.max(0, periodMs - busy));
  };
  spin();
} else {
  const percent = Number(mode ?? 20);
  const burst = Number(rest[0] ?? 5);
  if (!(percent > 0 && percent < 100) || !(burst > 0)) throw new Error(`emulate-steal: want 0 < percent < 100 and burst > 0 ms, got ${mode} ${rest[0]}`);
  const cores = availableParallelism();
  const children = Array.from({ length: cores }, (_, core) =>
    spawn('taskset', ['-c', String(core), 'chrt', '-f', '80', process.execPath, ...process.execArgv, process.argv[1]!, '--core', String(percent), String(burst)], { stdio: 'inherit' }),
  );
  console.log(`emulate-steal: ${percent} % of each of ${cores} cores in bursts of ~${burst} ms; Ctrl-C stops it`);
  const stop = (): void => {
    for (const c of children) c.kill();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  for (const c of children) c.on('exit', (code) => code && console.error(`emulate-steal: a core's loop exited with ${code} (root, chrt and taskset needed)`));
}
