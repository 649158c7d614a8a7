// The network-fault tests' tool check (tests/support/require-tools.ts): skip with the reason on a
// developer's machine, fail with it in CI, run when the tools are there.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isCi, requireTools, toolVerdict } from '../support/require-tools.ts';

test('missing fault-test tools skip locally and fail in CI, with the reason', () => {
  assert.deepEqual(toolVerdict('coturn', null, { CI: 'true' }), { run: true });
  assert.deepEqual(toolVerdict('coturn', 'not installed', {}), { run: false, skip: true, reason: 'coturn: unavailable: not installed' });
  const ci = toolVerdict('coturn', 'not installed', { CI: 'true' });
  assert.equal(ci.run, false);
  assert.ok(!ci.run && !ci.skip && /required in CI.*not installed/.test(ci.reason), JSON.stringify(ci));
  for (const [v, want] of [['true', true], ['1', true], ['yes', true], ['', false], ['0', false], ['false', false], ['FALSE', false]] as const) {
    assert.equal(isCi({ CI: v }), want, `CI=${v}`);
  }
  assert.equal(isCi({}), false);

  const skips: string[] = [];
  const fake = { skip: (cond: boolean, why: string) => void (cond && skips.push(why)) };
  const saved = process.env['CI'];
  try {
    delete process.env['CI'];
    requireTools(fake, 'nft', 'needs root');
    assert.deepEqual(skips, ['nft: unavailable: needs root']);
    process.env['CI'] = 'true';
    assert.throws(() => requireTools(fake, 'nft', 'needs root'), /required in CI \(CI=true\) but unavailable: needs root/);
    requireTools(fake, 'nft', null);
  } finally {
    if (saved === undefined) delete process.env['CI'];
    else process.env['CI'] = saved;
  }
});
