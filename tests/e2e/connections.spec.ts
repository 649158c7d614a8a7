// Everyone's connection at a glance (issue 12, item 4), in real browsers on the real server: each
// participant publishes how they hear every peer through the room's awareness, and every member's
// view draws one light per pair from those summaries, the same on every view.

import { expect, test } from '@playwright/test';
import { joinRoom, setRedundancy } from '../support/browsers.ts';
import { stats, waitForPeers } from '../support/stats.ts';
import { roomSuite } from '../support/suite.ts';

const suite = roomSuite('connections');

test('connections at a glance: the same light per pair on every member\'s view, from both ends\' reports; reasons on tap; each member\'s input and depth', async () => {
  test.setTimeout(120_000);
  const { wav } = suite;
  const [alice, bob, carol] = await Promise.all([suite.launch({ wav: wav.a }), suite.launch({ wav: wav.b }), suite.launch({ wav: wav.a })]);
  const room = 'lights-' + Date.now();
  await joinRoom(alice.page, suite.server.url, room, 'Alice');
  await joinRoom(bob.page, suite.server.url, room, 'Bob');
  await waitForPeers(alice.page, 1);
  await setRedundancy(alice.page, 'Off');
  const pair = (page: typeof alice.page, names: string) => page.locator(`li[data-pair="${names}"]`);
  for (const p of [alice, bob]) await expect(pair(p.page, 'Alice–Bob')).toHaveAttribute('data-light', /green|amber/, { timeout: 20_000 });
  await expect(alice.page.locator('[data-member-note="Bob"]')).toContainText(/input peak -?\d+\.\d dBFS · depth \d+/);

  // Carol joins with the test build's packet drop (one in four) and redundancy off. NOT proven
  // here yet: that this turns her pairs red. Her receivers counted 0.5 % lost where 25 % was meant
  // (redundancy 0 at all three), and 2 runs in 7 never went red; the switch or what fills the
  // frames is under investigation (closing note of this stop). What is asserted: every member's
  // view shows all three pairs, with the same lights on every view, from both ends' reports.
  await joinRoom(carol.page, suite.server.url, room, 'Carol', { query: 'test=tap&dropEvery=4' });
  await setRedundancy(carol.page, 'Off');
  const lights = async (page: typeof alice.page): Promise<string> =>
    JSON.stringify(await page.locator('li[data-pair]').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-pair')}:${e.getAttribute('data-light')}`).sort()));
  await expect.poll(async () => ((await stats(alice.page))?.peers ?? []).length, { timeout: 30_000, intervals: [100] }).toBe(2);
  const joinedAt = Date.now();
  await expect
    .poll(
      async () => {
        const all = await Promise.all([alice, bob, carol].map((p) => lights(p.page)));
        return all.every((l) => l === all[0]) && !all[0]!.includes('unknown') && (JSON.parse(all[0]!) as string[]).length === 3;
      },
      { timeout: 15_000, intervals: [250] },
    )
    .toBe(true);
  console.log(`the same three lights on every view ${Date.now() - joinedAt} ms after Carol's link reached Alice's worker: ${await lights(alice.page)}`);
  console.log(`redundancy in use: Alice ${(await stats(alice.page))?.redundancy}, Bob ${(await stats(bob.page))?.redundancy}, Carol ${(await stats(carol.page))?.redundancy}; Alice's counters ${JSON.stringify(((await stats(alice.page))?.peers ?? []).map((p) => ({ lost: p.lost, recovered: p.recovered, received: p.received, underruns: p.underruns })))}`);

  // The reasons: on tap (the row opens) and on hover (its title), with the direction that failed.
  await pair(bob.page, 'Alice–Carol').locator('summary').click();
  await expect(pair(bob.page, 'Alice–Carol').locator('.why')).toContainText(/Alice hears Carol: \d+\.\d\d % glitches/);
  // For the log (not yet checked against an outside count: see the closing note of this stop).
  console.log(`shown: ${await pair(bob.page, 'Alice–Carol').locator('.why').textContent()}; Carol's sender drops one packet in four`);
  expect(await pair(bob.page, 'Alice–Carol').locator('summary').getAttribute('title')).toMatch(/Carol hears Alice: /);
});
