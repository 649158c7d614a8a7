// Everyone's connection at a glance (issue 12, item 4), in real browsers on the real server: each
// participant publishes how they hear every peer through the room's awareness, and every member's
// view draws one light per pair from those summaries. A sender whose packets are lost (the test
// build's dropEvery, with redundancy off so each dropped packet is a lost frame) turns both of its
// pairs red on all three views within seconds; the clean pair comes out of red.

import { expect, test } from '@playwright/test';
import { joinRoom, setRedundancy } from '../support/browsers.ts';
import { stats, waitForPeers } from '../support/stats.ts';
import { roomSuite } from '../support/suite.ts';

const suite = roomSuite('connections');

test('connections at a glance: a lossy sender\'s pairs turn red on every member\'s view within 3 s of the loss showing; reasons on tap; each member\'s input and depth', async () => {
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

  // Carol's sender drops every 4th packet.
  await joinRoom(carol.page, suite.server.url, room, 'Carol', { query: 'test=tap&dropEvery=4' });
  // When the loss first shows in Alice's worker (her 1 Hz stats count Carol's lost frames)...
  let lossAt = 0;
  await expect
    .poll(
      async () => {
        const lost = ((await stats(alice.page))?.peers ?? []).some((p) => p.lost > 0);
        if (lost && !lossAt) lossAt = Date.now();
        return lost;
      },
      { timeout: 30_000, intervals: [100] },
    )
    .toBe(true);
  // ...every member's view turns Carol's two pairs red within 3 s.
  const seen: Record<string, number> = {};
  await Promise.all(
    [['Alice', alice], ['Bob', bob], ['Carol', carol]].map(async ([name, p]) => {
      const page = (p as typeof alice).page;
      for (const names of ['Alice–Carol', 'Bob–Carol']) await expect(pair(page, names)).toHaveAttribute('data-light', 'red', { timeout: 10_000 });
      seen[name as string] = Date.now() - lossAt;
    }),
  );
  console.log(`red on each view, ms after the loss first showed in Alice's stats: ${JSON.stringify(seen)}`);
  for (const ms of Object.values(seen)) expect(ms).toBeLessThanOrEqual(3000);
  // Alice and Bob's own link: a third browser joining on two cores makes them glitch for real for
  // some seconds (4–8 % here, the light is right to show it); it comes back out of red.
  console.log(`Alice–Bob: ${await pair(alice.page, 'Alice–Bob').locator('summary').getAttribute('title')}`);
  for (const p of [alice, bob, carol]) await expect(pair(p.page, 'Alice–Bob')).not.toHaveAttribute('data-light', 'red', { timeout: 20_000 });
  console.log(`Alice–Bob later: ${await pair(alice.page, 'Alice–Bob').locator('summary').getAttribute('title')}`);

  // The reasons: on tap (the row opens) and on hover (its title), with the direction that failed.
  await pair(bob.page, 'Alice–Carol').locator('summary').click();
  await expect(pair(bob.page, 'Alice–Carol').locator('.why')).toContainText(/Alice hears Carol: \d+\.\d\d % glitches/);
  // For the log (not yet checked against an outside count: see the closing note of this stop).
  console.log(`shown: ${await pair(bob.page, 'Alice–Carol').locator('.why').textContent()}; Carol's sender drops one packet in four`);
  expect(await pair(bob.page, 'Alice–Carol').locator('summary').getAttribute('title')).toMatch(/Carol hears Alice: /);
});
