// The browser suite (`npm run test:browser`): Playwright once; then, only if every test that
// failed did so while the host stole at least RERUN_STEAL_PERCENT of the CPU (scripts/suite-steal.ts),
// those tests once more after a quiet window. The run is green only if the second attempt passes;
// a failure on a quiet host is red at once. Both attempts print in full. Arguments go to Playwright.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { waitForQuietHost } from './host-steal.ts';
import { RERUN_STEAL_PERCENT, STEAL_FILE, rerunVerdict, type TestSteal } from './suite-steal.ts';

function playwright(args: string[]): number {
  const r = spawnSync('npx', ['playwright', 'test', ...args], { stdio: 'inherit' });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

function records(): TestSteal[] {
  try {
    return JSON.parse(readFileSync(STEAL_FILE, 'utf8')) as TestSteal[];
  } catch {
    return [];
  }
}

const args = process.argv.slice(2);
const first = playwright(args);
if (first === 0) process.exit(0);
const verdict = rerunVerdict(records());
if (!verdict.rerun) {
  console.log(`browser suite: failed; not run again: ${verdict.why}`);
  process.exit(first);
}
console.log(
  `browser suite: ${verdict.tests.length} test(s) failed, each while the host took ${RERUN_STEAL_PERCENT} % or more of the CPU: ` +
    `${verdict.tests.map((t) => `"${t.title}" (${t.stealPercent!.toFixed(1)} %)`).join(', ')}. Running them once more after a quiet window; the suite passes only if they do.`,
);
await waitForQuietHost(10);
const second = playwright([...args, '--last-failed']);
console.log(`browser suite: the rerun of the test(s) that failed under steal ${second === 0 ? 'passed' : 'failed'}`);
process.exit(second);
