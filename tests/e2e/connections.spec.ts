// Everyone's connection at a glance (issue 12, item 4), in real browsers on the real server: each
// participant publishes how they hear every peer through the room's awareness, and every member's
// view draws one light per pair from those summaries, the same on every view.

import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { THREE_ON_TWO_CORES, joinRoom, setRedundancy } from '../support/browsers.ts';
import { stats, waitForPeers } from '../support/stats.ts';
import { setDropEvery } from '../support/taps.ts';
import { roomSuite } from '../support/suite.ts';

// The test build: Carol's sender drops frames on request (tests/support/taps.ts setDropEvery).
const suite = roomSuite('connections', { build: 'test' });

test('connections at a glance: the same light per pair on every member\'s view, from both ends\' reports; reasons on tap; each member\'s input and depth', async () => {
  test.setTimeout(120_000);
  const { wav } = suite;
  const [alice, bob, carol] = await Promise.all([suite.launch({ wav: wav.a }), suite.launch({ wav: wav.b }), suite.launch({ wav: wav.a })]);
  const room = 'lights-' + Date.now();
  await joinRoom(alice.page, suite.server.url, room, 'Alice', THREE_ON_TWO_CORES);
  await joinRoom(bob.page, suite.server.url, room, 'Bob', THREE_ON_TWO_CORES);
  await waitForPeers(alice.page, 1);
  await setRedundancy(alice.page, 'Off');
  const pair = (page: typeof alice.page, names: string) => page.locator(`li[data-pair="${names}"]`);
  for (const p of [alice, bob]) await expect(pair(p.page, 'Alice–Bob')).toHaveAttribute('data-light', /green|amber/, { timeout: 20_000 });
  await expect(alice.page.locator('[data-member-note="Bob"]')).toContainText(/input peak -?\d+\.\d dBFS · depth \d+/);

  // Carol joins (test build, redundancy off at all three): once every view shows the same three
  // lights, her sender starts dropping one frame in four before it reaches any channel.
  await joinRoom(carol.page, suite.server.url, room, 'Carol', { query: 'test=tap', ...THREE_ON_TWO_CORES });
  await setRedundancy(carol.page, 'Off');
  const lights = async (page: typeof alice.page): Promise<string[]> =>
    (await page.locator('li[data-pair]').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-pair')}:${e.getAttribute('data-light')}`))).sort();
  await expect.poll(async () => ((await stats(alice.page))?.peers ?? []).length, { timeout: 30_000, intervals: [100] }).toBe(2);
  const joinedAt = Date.now();
  await expect
    .poll(
      async () => {
        const all = (await Promise.all([alice, bob, carol].map((p) => lights(p.page)))).map((l) => JSON.stringify(l));
        return all.every((l) => l === all[0]) && !all[0]!.includes('unknown') && (JSON.parse(all[0]!) as string[]).length === 3;
      },
      { timeout: 15_000, intervals: [250] },
    )
    .toBe(true);
  console.log(`the same three lights on every view ${Date.now() - joinedAt} ms after Carol's link reached Alice's worker: ${(await lights(alice.page)).join(' ')}`);
  const redundancy = await Promise.all([alice, bob, carol].map(async (p) => (await stats(p.page))?.redundancy));
  expect(redundancy, 'redundancy off at all three: a dropped frame is lost, not recovered').toEqual([0, 0, 0]);
  // All links clean first. (Three browsers starting on two cores glitch: a pair can show red
  // for the 10 s window after Carol's join.)
  const cleanBy = Date.now() + 30_000;
  while ((await lights(alice.page)).filter((l) => !l.endsWith(':red')).length !== 3 && Date.now() < cleanBy) await alice.page.waitForTimeout(250);
  const lightsWhy = async (): Promise<string> => {
    const titles = await alice.page.locator('li[data-pair]').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-pair')}: ${e.querySelector('summary')?.getAttribute('title') ?? '(no reasons yet)'}`));
    const each = await Promise.all([alice, bob, carol].map(async (p, i) => `${['Alice', 'Bob', 'Carol'][i]}: ${((await stats(p.page))?.peers ?? []).map((x) => `${x.peerId.slice(0, 6)} underruns ${x.underruns} trimmed ${x.trimmed} missed ${x.missed} late ${x.late} lost ${x.lost} resyncs ${x.resyncs} depth ${x.depth}; its sender dropped ${x.sendDropped}`).join(', ')}`));
    return `${titles.join(' | ')} || counters so far: ${each.join(' | ')}`;
  };
  const cleanWhy = await lightsWhy();
  console.log(`30 s after Carol's join (or once all clean): ${cleanWhy}`);
  expect((await lights(alice.page)).filter((l) => !l.endsWith(':red')).length, `every light out of red within 30 s of the third join (${cleanWhy})`).toBe(3);

  // Each receiver's counters per peer (the stats name no one: the lossy peer is found by its loss).
  const counters = async (page: typeof alice.page) =>
    ((await stats(page))?.peers ?? []).map((p) => ({ id: p.peerId, lost: p.lost, received: p.received, recovered: p.recovered, late: p.late, trimmed: p.trimmed, resyncs: p.resyncs, underruns: p.underruns, sendDropped: p.sendDropped }));
  await setDropEvery(carol.page, 4);
  const degradedAt = Date.now();
  const redOn: number[] = [];
  await expect
    .poll(
      async () => {
        const all = await Promise.all([alice, bob, carol].map((p) => lights(p.page)));
        all.forEach((l, i) => {
          if (redOn[i] === undefined && l.filter((x) => x.includes('Carol') && x.endsWith(':red')).length === 2) redOn[i] = Date.now() - degradedAt;
        });
        return redOn.filter((x) => x !== undefined).length;
      },
      { timeout: 3_000, intervals: [100] },
    )
    .toBe(3);
  console.log(`Carol's two pairs red on Alice's, Bob's and Carol's views ${redOn.join(', ')} ms after her sender started dropping one frame in four; Alice–Bob ${(await lights(alice.page)).find((l) => l.startsWith('Alice–Bob'))}`);

  // What the receivers count, against what Carol's sender dropped: a quarter of her frames. (The
  // lights turned on a stats report from after the drops began: every frame counted from here on
  // left her sender after they did.)
  // Each sender also drops frames toward a peer whose channel backs up (congestion on this busy
  // machine, `sendDropped` in the sender's stats): the receiver rightly counts those lost too
  // (including those a buffer reset passed over), so what is compared with the tap's quarter, and
  // with nothing for the clean peer, is the loss beyond them.
  // A sender counts a drop at once, its receiver once the frame's slot passes (depth and transit
  // later), each in its next 1 Hz stats: over one window read from all pages at once, a burst of
  // drops at an edge falls in the sender's window and not the receiver's, or the other way (seen: a
  // clean stream 2.5 % "beyond" its sender's drops, one run of drops at an edge). So the clean
  // stream's drops are also taken over a window that holds the receiver's: from 1.2 s before it
  // (a drop that early has passed the receiver's slot and its stats by the window's start) to
  // 1.2 s after it (a stats tick of the sender's after the receiver's last).
  const pages = [alice, bob, carol];
  const around = await Promise.all(pages.map((p) => counters(p.page)));
  await alice.page.waitForTimeout(1_200);
  const before = await Promise.all(pages.map((p) => counters(p.page)));
  await alice.page.waitForTimeout(10_500); // a whole quality window (10 s) of the lossy link
  const after = await Promise.all(pages.map((p) => counters(p.page)));
  await alice.page.waitForTimeout(1_200);
  const aroundAfter = await Promise.all(pages.map((p) => counters(p.page)));
  /** What sender page `k` dropped as congested toward the peer that is neither of `notIds` nor itself, over the window (`wide`: the window that holds the receiver's). */
  const droppedToward = (k: number, notIds: string[], wide = false): number => {
    const [from, to] = wide ? [around, aroundAfter] : [before, after];
    const a = to[k]!.find((x) => !notIds.includes(x.id));
    const b = a && from[k]!.find((x) => x.id === a.id);
    return a && b ? a.sendDropped - b.sendDropped : 0;
  };
  /** Alice's counts of Carol's stream over the window (set below). */
  let aliceFromCarol: { expected: number; underruns: number; trimmed: number; late: number } | null = null;
  for (let i = 0; i < 2; i++) {
    const ids = after[i]!.map((x) => x.id); // the receiver's two peers
    const lossy = after[i]!.map((a) => {
      const b = before[i]!.find((x) => x.id === a.id)!;
      const lost = a.lost - b.lost;
      const expected = a.received - b.received + (a.recovered - b.recovered) + (a.late - b.late) + lost;
      // This stream's sender: the other page that lists the receiver's other peer but not this
      // one (no page lists itself); its entries are the receiver and that other peer.
      const other = ids.find((x) => x !== a.id)!;
      const k = [0, 1, 2].find((j) => j !== i && after[j]!.some((x) => x.id === other) && !after[j]!.some((x) => x.id === a.id))!;
      const dropped = droppedToward(k, [other]);
      const droppedAround = droppedToward(k, [other], true);
      return { id: a.id, lost, expected, dropped, droppedAround, late: a.late - b.late, percent: (100 * (lost - dropped)) / Math.max(1, expected), percentAround: (100 * (lost - droppedAround)) / Math.max(1, expected), trimmed: a.trimmed - b.trimmed, resyncs: a.resyncs - b.resyncs, underruns: a.underruns - b.underruns };
    });
    const counted = `${i ? 'Bob' : 'Alice'} counted: ${lossy.map((l) => `${l.id.slice(0, 6)} lost ${l.lost} of ${l.expected}, its sender dropped ${l.dropped} as congested (${l.droppedAround} from 1.2 s before to 1.2 s after; ${l.percent.toFixed(1)} % beyond, ${l.percentAround.toFixed(1)} % beyond those around; trimmed ${l.trimmed}, underruns ${l.underruns}, resyncs ${l.resyncs})`).join(', ')}`;
    console.log(counted);
    const worst = lossy.reduce((m, l) => (l.percent > m.percent ? l : m));
    if (i === 0) aliceFromCarol = worst;
    expect(worst.percent, `the peer that drops one frame in four: a quarter of its frames lost (${counted})`).toBeGreaterThan(24);
    expect(worst.percent, `(plus what a busy machine loses on its own) (${counted})`).toBeLessThan(27);
    // (The lossy stream above: its sender's drops over the receiver's own window, so a quarter must
    // show; the window around would also take drops the receiver has not counted in it.)
    const other = lossy.find((l) => l !== worst)!;
    expect(other.percentAround, `the clean peer: lost beyond its sender's drops around the window (${counted})`).toBeLessThan(2);
  }

  // The reasons: on tap (the row opens) and on hover (its title), with the direction that failed.
  await pair(bob.page, 'Alice–Carol').locator('summary').click();
  const why = pair(bob.page, 'Alice–Carol').locator('.why');
  await expect(why).toContainText(/Alice hears Carol: \d+\.\d\d % glitches/);
  // The figure shown is the outside count: a quarter of Carol's frames never left her sender. A
  // light that does not change is republished every 5 s, so the figure can be that old: the
  // window has been all lossy for at most 5 s more.
  const shown = async () => Number(/Alice hears Carol: (\d+\.\d\d) %/.exec((await why.textContent())!)![1]);
  await expect.poll(shown, { timeout: 6_000, intervals: [250] }).toBeGreaterThan(23);
  // Above it: what the loss check allows a busy machine (2 %), and the underruns, trims and late
  // frames Alice herself counted of Carol's stream over the window (the label counts every glitch
  // a listener hears; seen: 28.10 % shown with 2.8 % of them).
  const a = aliceFromCarol!;
  const machine = (100 * (a.underruns + a.trimmed + a.late)) / Math.max(1, a.expected);
  console.log(`shown on Bob's view: ${await why.textContent()}; Carol's sender drops one frame in four; Alice counted ${machine.toFixed(2)} % more glitches of Carol's stream in the window`);
  expect(await shown(), `a quarter, what a busy machine loses (2 %) and the ${machine.toFixed(2)} % of underruns, trims and late frames Alice counted`).toBeLessThan(27 + machine);
  expect(await pair(bob.page, 'Alice–Carol').locator('summary').getAttribute('title')).toMatch(/Carol hears Alice: /);

  // Bob's session log: the pair that went red with its reason in the view, and in the export
  // Carol's arrival and the setting Alice changed, by name (the Yjs writer, not a claimed name).
  const log = bob.page.locator('tutti-session-log');
  await log.locator('summary').click();
  await expect(log.getByTestId('session-log')).toContainText(/(Alice ↔ Carol|Carol ↔ Alice): [a-z ]+ → struggling \(.*hears.*\d+\.\d\d % glitches/);
  const [dl] = await Promise.all([bob.page.waitForEvent('download'), log.getByRole('button', { name: 'Export session log' }).click()]);
  expect(dl.suggestedFilename()).toMatch(/^tutti-session-lights-\d+-.*\.txt$/);
  const text = readFileSync((await dl.path())!, 'utf8');
  console.log(`Bob's exported session log:\n${text}`);
  expect(text).toMatch(/you joined as Bob/);
  expect(text).toMatch(/Alice \(.*\) (was here|joined)/);
  expect(text).toMatch(/Carol \(.*\) joined/);
  expect(text).toMatch(/Alice set redundancy to off/);
  expect(text).toMatch(/(Alice ↔ Carol|Carol ↔ Alice): .* → struggling/);
});
