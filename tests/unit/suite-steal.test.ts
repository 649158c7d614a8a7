// The rule for a browser-suite failure under host steal (scripts/suite-steal.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RERUN_MAX_TESTS, RERUN_STEAL_PERCENT, rerunVerdict, type TestSteal } from '../../scripts/suite-steal.ts';

const t = (title: string, status: string, stealPercent: number | null): TestSteal => ({ title, file: 'x.spec.ts', line: 1, status, stealPercent });

test('suite steal: failures that each ran under heavy steal are run once more, and only they', () => {
  const v = rerunVerdict([t('a', 'passed', 40), t('b', 'failed', 32.4), t('c', 'timedOut', RERUN_STEAL_PERCENT), t('d', 'skipped', 0)]);
  assert.equal(v.rerun, true);
  assert.deepEqual(v.rerun && v.tests.map((x) => x.title), ['b', 'c']);
});

test('suite steal: one failure on a quiet host, or with the steal unknown, keeps the run red as it is', () => {
  const quiet = rerunVerdict([t('b', 'failed', 32.4), t('e', 'failed', RERUN_STEAL_PERCENT - 0.1)]);
  assert.equal(quiet.rerun, false);
  assert.match(!quiet.rerun ? quiet.why : '', /"e" \(9\.9 % steal\)/);
  const unknown = rerunVerdict([t('b', 'failed', 50), t('f', 'failed', null)]);
  assert.equal(unknown.rerun, false);
  assert.match(!unknown.rerun ? unknown.why : '', /"f" \(steal unknown\)/);
});

test('suite steal: no failed test (the run broke before its tests) or too many are not run again', () => {
  assert.equal(rerunVerdict([]).rerun, false);
  assert.equal(rerunVerdict([t('a', 'passed', 0)]).rerun, false);
  const many = Array.from({ length: RERUN_MAX_TESTS + 1 }, (_, i) => t(`m${i}`, 'failed', 50));
  assert.equal(rerunVerdict(many).rerun, false);
  assert.equal(rerunVerdict(many.slice(1)).rerun, true);
});
