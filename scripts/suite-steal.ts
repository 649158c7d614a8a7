// The browser suite's record of the CPU the host took during each test (written by
// tests/support/steal-reporter.ts) and the rule for what a failure under such steal means
// (scripts/browser-suite.ts applies it). A test that failed while the hypervisor took a tenth of
// the machine says nothing about the code: the audio threads of two or three browsers on two
// cores cannot make up time they were not given (docs/TESTING.md, "A host that steals CPU").

/** Where the reporter writes the run's records (next to Playwright's own results). */
export const STEAL_FILE = 'test-results/steal.json';

/** A failure during at least this much steal (percent of the machine's CPU) may be run once more. */
export const RERUN_STEAL_PERCENT = 10;

/** At most this many failures are run again: more than that is not a few tests a burst spoiled. */
export const RERUN_MAX_TESTS = 10;

/** One finished test, as the reporter saw it. */
export interface TestSteal {
  title: string;
  file: string;
  line: number;
  /** Playwright's TestResult.status: 'passed' | 'failed' | 'timedOut' | 'skipped' | 'interrupted'. */
  status: string;
  /** Steal while it ran, percent of the machine's CPU; null where /proc/stat cannot say. */
  stealPercent: number | null;
}

/** What to do after a run that did not pass. */
export type RerunVerdict =
  | { rerun: true; tests: TestSteal[] }
  | { rerun: false; why: string };

const failed = (t: TestSteal): boolean => t.status === 'failed' || t.status === 'timedOut' || t.status === 'interrupted';

/**
 * A failed run is run again only where every test that failed did so while the host took at least
 * RERUN_STEAL_PERCENT of the CPU, and there were at most RERUN_MAX_TESTS of them. Any failure on a
 * quiet host (or one whose steal could not be read) makes the run red as it stands.
 */
export function rerunVerdict(records: readonly TestSteal[]): RerunVerdict {
  const bad = records.filter(failed);
  if (bad.length === 0) return { rerun: false, why: 'no test failed (the run itself did not finish)' };
  const quiet = bad.filter((t) => t.stealPercent === null || t.stealPercent < RERUN_STEAL_PERCENT);
  if (quiet.length > 0) {
    const which = quiet.map((t) => `"${t.title}" (${t.stealPercent === null ? 'steal unknown' : `${t.stealPercent.toFixed(1)} % steal`})`);
    return { rerun: false, why: `failed with the host under ${RERUN_STEAL_PERCENT} % steal: ${which.join(', ')}` };
  }
  if (bad.length > RERUN_MAX_TESTS) return { rerun: false, why: `${bad.length} tests failed, more than the ${RERUN_MAX_TESTS} a rerun takes` };
  return { rerun: true, tests: bad };
}
