// Playwright reporter (playwright.config.ts, next to the list reporter): the CPU the host took from
// this machine while each test ran (scripts/host-steal.ts). Printed for every failed test and for
// any test that ran with more than a few percent stolen, and over the whole run at the end, so a
// timing failure on a starved host says so in the log (docs/TESTING.md, "A host that steals CPU").
// It also writes each finished test's steal to STEAL_FILE, which the suite's runner
// (scripts/browser-suite.ts) reads to decide whether a failure may be run again.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { FullResult, Reporter, TestCase, TestResult } from '@playwright/test/reporter';
import { cpuTimes, stealPercent, QUIET_PERCENT, type CpuTimes } from '../../scripts/host-steal.ts';
import { STEAL_FILE, type TestSteal } from '../../scripts/suite-steal.ts';

export default class StealReporter implements Reporter {
  private readonly atStart = new Map<string, CpuTimes>();
  private readonly runStart = cpuTimes();
  private readonly done: TestSteal[] = [];

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
    const s = a && b ? stealPercent(a, b) : null;
    this.done.push({ title: test.title, file: test.location.file, line: test.location.line, status: result.status, stealPercent: s });
    if (s === null) return;
    if (result.status !== 'passed' && result.status !== 'skipped') console.log(`host steal during "${test.title}" (${result.status}): ${s.toFixed(1)} % of the machine's CPU`);
    else if (s >= QUIET_PERCENT) console.log(`host steal during "${test.title}": ${s.toFixed(1)} % of the machine's CPU`);
  }

  onEnd(result: FullResult): void {
    mkdirSync(dirname(STEAL_FILE), { recursive: true });
    writeFileSync(STEAL_FILE, JSON.stringify(this.done, null, 1));
    const b = cpuTimes();
    if (this.runStart && b) console.log(`host steal over the browser suite (${result.status}): ${stealPercent(this.runStart, b).toFixed(1)} % of the machine's CPU`);
  }
}
