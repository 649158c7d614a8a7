// Playwright reporter (playwright.config.ts, next to the list reporter): the CPU the host took from
// this machine while each test ran (scripts/host-steal.ts). Printed for every failed test and for
// any test that ran with more than a few percent stolen, and over the whole run at the end, so a
// timing failure on a starved host says so in the log (docs/TESTING.md, "A host that steals CPU").

import type { FullResult, Reporter, TestCase, TestResult } from '@playwright/test/reporter';
import { cpuTimes, stealPercent, QUIET_PERCENT, type CpuTimes } from '../../scripts/host-steal.ts';

export default class StealReporter implements Reporter {
  private readonly atStart = new Map<string, CpuTimes>();
  private readonly runStart = cpuTimes();

  printsToStdio(): boolean {
    return true;
  }

  onTestBegin(test: TestCase): void {
    const t = cpuTimes();
    if (t) this.atStart.set(test.id, t);
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    const a = this.atStart.get(test.id);
    const b = cpuTimes();
    this.atStart.delete(test.id);
    if (!a || !b) return;
    const s = stealPercent(a, b);
    if (result.status !== 'passed' && result.status !== 'skipped') console.log(`host steal during "${test.title}" (${result.status}): ${s.toFixed(1)} % of the machine's CPU`);
    else if (s >= QUIET_PERCENT) console.log(`host steal during "${test.title}": ${s.toFixed(1)} % of the machine's CPU`);
  }

  onEnd(result: FullResult): void {
    const b = cpuTimes();
    if (this.runStart && b) console.log(`host steal over the browser suite (${result.status}): ${stealPercent(this.runStart, b).toFixed(1)} % of the machine's CPU`);
  }
}
