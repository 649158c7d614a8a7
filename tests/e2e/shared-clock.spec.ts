// The shared clock (issue 12, item 1), in three browser processes on the real server: the first to
// arrive is the reference; the others follow its clock through the exchanges on their audio
// channels, one of them with its clock skewed (the test build's clockOffsetMs and clockPpm); when the
// reference leaves, a follower takes over and the shared clock runs on.
//
// The outside truth: all three processes run on one machine and share its clock, so each worker
// states, in the test build, the shared clock and its own clock each minus the machine's
// (clockCheck). Every member's shared clock must read the same; each estimate of a peer's clock
// must match that peer's own clock as the machine sees it.

import { expect, test, type Page } from '@playwright/test';
import { THREE_ON_TWO_CORES, joinRoom } from '../support/browsers.ts';
import { stats, waitForPeers } from '../support/stats.ts';
import { clockCheck } from '../support/taps.ts';
import { roomSuite } from '../support/suite.ts';

const suite = roomSuite('shared-clock', { build: 'test' });

/** Carol's clock: 40 ms ahead and 300 ppm fast (a badly set, fast crystal). */
const SKEW = 'clockOffsetMs=40&clockPpm=300';

test('shared clock: three processes agree within 1 ms, a skewed clock is measured to within 1 ms, and the reference hands over without a step', async () => {
  test.setTimeout(240_000);
  const { wav } = suite;
  const [alice, bob, carol] = await Promise.all([suite.launch({ wav: wav.a }), suite.launch({ wav: wav.b }), suite.launch({ wav: wav.a })]);
  const room = 'clock-' + Date.now();
  await joinRoom(alice.page, suite.server.url, room, 'Alice', THREE_ON_TWO_CORES);
  const label = (p: Page) => p.getByTestId('shared-clock');
  // Alone for 3 s, Alice starts the room's timeline.
  await expect(label(alice.page)).toHaveAttribute('data-state', 'self', { timeout: 15_000 });
  await joinRoom(bob.page, suite.server.url, room, 'Bob', THREE_ON_TWO_CORES);
  await joinRoom(carol.page, suite.server.url, room, 'Carol', { query: `test=tap&${SKEW}`, ...THREE_ON_TWO_CORES });
  for (const p of [alice, bob, carol]) await waitForPeers(p.page, 2);
  for (const p of [bob, carol]) await expect(label(p.page)).toHaveText(/Shared clock: Alice's, yours within ± \d+\.\d\d ms/, { timeout: 15_000 });
  await expect(label(alice.page)).toHaveAttribute('data-state', 'self');

  // 90 s of readings, every 3 s (the first 10 s after both follow are the estimate settling).
  const pages = { Alice: alice.page, Bob: bob.page, Carol: carol.page };
  type Reading = { shared: number[]; own: number[]; est: Record<string, Record<string, number>>; err: Record<string, number | null>; basis: Record<string, Record<string, unknown>> };
  const read = async (): Promise<Reading> => {
    const checks = await Promise.all(Object.values(pages).map((p) => clockCheck(p)));
    const all = await Promise.all(Object.values(pages).map((p) => stats(p)));
    const ids = await Promise.all(Object.values(pages).map((p) => p.evaluate(() => (document.querySelector('tutti-app') as unknown as { session?: { room: { clientId: number } } } | null)?.session?.room.clientId ?? null)));
    const names = Object.keys(pages);
    const nameOf = (peerId: string) => names[ids.indexOf(Number(peerId))] ?? peerId;
    return {
      shared: checks.map((c) => c.sharedMinusHostMs ?? NaN),
      own: checks.map((c) => c.ownMinusHostMs),
      // Each worker's estimates at the instant it read its own clock (the stats' are up to a second old).
      est: Object.fromEntries(names.map((n, i) => [n, Object.fromEntries(Object.entries(checks[i]!.peers).filter((e): e is [string, number] => e[1] !== null).map(([id, o]) => [nameOf(id), o]))])),
      err: Object.fromEntries(names.map((n, i) => [n, all[i]?.clock.errorMs ?? null])),
      // What each estimate rested on (its error bound, drift, exchanges, their span, the anchor's age), for the log.
      basis: Object.fromEntries(names.map((n, i) => [n, Object.fromEntries(Object.entries(checks[i]!.estimates).map(([id, e]) => [nameOf(id), e && { err: +e.errorMs.toFixed(3), ppm: +e.driftPpm.toFixed(1), n: e.samples, span: +e.spanS.toFixed(1), age: +e.anchorAgeS.toFixed(1) }]))])),
    };
  };
  await alice.page.waitForTimeout(10_000);
  let worstShared = 0;
  let worstEstimate = 0;
  let shownError = 0;
  let worstAt = '';
  for (let i = 0; i < 30; i++) {
    const r = await read();
    const names = Object.keys(pages);
    // Every member's shared clock reads the same (the machine's clock is the common yardstick).
    for (const v of r.shared) worstShared = Math.max(worstShared, Math.abs(v - r.shared[0]!));
    // Each estimate of a peer's clock minus ours against the truth: its own clock minus ours.
    for (const [a, peers] of Object.entries(r.est)) {
      for (const [b, offset] of Object.entries(peers)) {
        const truth = r.own[names.indexOf(b)]! - r.own[names.indexOf(a)]!;
        if (Math.abs(offset - truth) > worstEstimate) worstAt = `${a}'s estimate of ${b} at t+${i * 3} s, ${(offset - truth).toFixed(3)} ms off: ${JSON.stringify(r.basis[a]?.[b])}`;
        worstEstimate = Math.max(worstEstimate, Math.abs(offset - truth));
      }
    }
    shownError = Math.max(shownError, r.err['Bob'] ?? 0, r.err['Carol'] ?? 0);
    if (i % 10 === 0) console.log(`t+${i * 3} s: shared − machine ${r.shared.map((x) => x.toFixed(3)).join(' / ')} ms; Carol's clock ${r.own[2]!.toFixed(3)} ms ahead; Alice's estimate of Carol ${r.est['Alice']?.['Carol']?.toFixed(3)} ms; errors shown ${JSON.stringify(r.err)}; estimates rest on ${JSON.stringify(r.basis)}`);
    await alice.page.waitForTimeout(3_000);
  }
  console.log(`over 90 s: the three shared clocks at most ${worstShared.toFixed(3)} ms apart; every estimate of a peer's clock within ${worstEstimate.toFixed(3)} ms of the truth (${worstAt}); the largest error bound shown ${shownError.toFixed(3)} ms`);
  expect(worstShared, 'the three shared clocks agree within 1 ms').toBeLessThan(1);
  expect(worstEstimate, "every estimate of a peer's clock within 1 ms").toBeLessThan(1);

  // Hand-over: Alice leaves; Bob or Carol (the lower client id) takes over, the other follows.
  const before = await read();
  await alice.close();
  const closedAt = Date.now();
  // When each label first showed 'self' (the new reference's clock runs from then on; the other
  // may take seconds longer to follow it).
  const selfAt: Record<string, number> = {};
  await expect
    .poll(async () => {
      const states = await Promise.all([bob, carol].map((p) => label(p.page).getAttribute('data-state')));
      states.forEach((st, i) => { if (st === 'self') selfAt[i ? 'Carol' : 'Bob'] ??= Date.now(); });
      return [...states].sort().join(',');
    }, { timeout: 45_000, intervals: [250] })
    .toBe('peer,self');
  const reference = (await label(bob.page).getAttribute('data-state')) === 'self' ? 'Bob' : 'Carol';
  await expect(label(reference === 'Bob' ? carol.page : bob.page)).toHaveText(new RegExp(`Shared clock: ${reference}'s`));
  delete (pages as Partial<typeof pages>).Alice;
  await bob.page.waitForTimeout(5_000);
  const after = await read();
  const handoverAt = selfAt[reference]!; // within ~1.25 s after it took over (stats are 1 Hz, the poll 4 Hz)
  const seconds = (Date.now() - handoverAt) / 1000;
  // The step: the shared clock before (Alice's, which the followers ran on until the hand-over)
  // against after. Carol's clock runs 300 ppm fast, so as the reference she moves the shared clock
  // 0.3 ms a second from the machine's from the moment she takes over; Bob's does not. (Up to
  // 1.25 s × 0.3 ms of this is unknown.)
  const runOn = reference === 'Carol' ? 0.3 * seconds : 0;
  const step = after.shared[0]! - before.shared[1]!;
  console.log(`${reference} took over; shared − machine before ${before.shared.map((x) => x.toFixed(3)).join(' / ')}, after ${after.shared.map((x) => x.toFixed(3)).join(' / ')} ms (it took over ${((handoverAt - closedAt) / 1000).toFixed(1)} s after Alice left; read ${seconds.toFixed(1)} s after that; expected run-on ${runOn.toFixed(2)} ms)`);
  expect(Math.abs(after.shared[0]! - after.shared[1]!), 'Bob and Carol agree after the hand-over').toBeLessThan(1);
  expect(Math.abs(step - runOn), 'no step at the hand-over').toBeLessThan(1);
});
