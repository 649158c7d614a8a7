// Teacher controls in a lesson room (issue 12, item 3), in three browser processes on the real
// server with the production build. Tess creates the room (her device holds the key the room is
// named after); Sam and Mallory know the room (and would know its password). Mallory has no key:
// she writes the room's document directly, as a modified app could, and nothing she writes is
// obeyed; every device logs it. The teacher's signed commands take effect on the students' devices
// and on everyone else's (links, mutes), and the role can be handed over.

import { expect, test, type Page } from '@playwright/test';
import { joinRoom } from '../support/browsers.ts';
import { stats } from '../support/stats.ts';
import { roomSuite } from '../support/suite.ts';

const suite = roomSuite('lesson');

type Session = {
  room: { clientId: number; lesson: { get(k: string): unknown; set(k: string, v: unknown): void }; control: { set(k: string, v: unknown): void } };
  choices: { master: number; depth: number; adaptive: boolean; mix: Map<string, { gain: number; muted: boolean }> };
  log: { entries: { text: string }[] };
  lessonCommand(c: unknown): Promise<void>;
};
const session = (): Session => (document.querySelector('tutti-app') as unknown as { session: Session }).session;
const inPage = <T>(page: Page, body: string): Promise<T> => page.evaluate(`(async () => { const s = (${session.toString()})(); ${body} })()`) as Promise<T>;

/** Audio links open on `page` (the worker's peers with an open channel). */
async function links(page: Page): Promise<number> {
  return ((await stats(page))?.peers ?? []).filter((p) => p.channelState === 'open').length;
}

/** The level page shows for the peer with client id `id` (its strip's meter, 0–100). */
async function levelOf(page: Page, id: number): Promise<number> {
  return page.evaluate((peer) => {
    const strip = [...document.querySelector('tutti-app')!.shadowRoot!.querySelector('tutti-room')!.shadowRoot!.querySelectorAll('tutti-peer-strip')].find((e) => e.getAttribute('data-peer') === String(peer));
    return strip ? Number(strip.shadowRoot!.querySelector('tutti-meter')!.getAttribute('aria-valuenow')) : -1;
  }, id);
}

const member = (page: Page, name: string) => page.locator(`li[data-lesson-member="${name}"]`);
const logText = (page: Page): Promise<string> => inPage<string>(page, "return s.log.entries.map((e) => e.text).join('\\n');");

test('lesson room: a waiting room the teacher controls; mute, set a mix, remove and hand over, signed and enforced on every device; forged changes ignored and logged', async () => {
  test.setTimeout(180_000);
  const { wav } = suite;
  const [tess, sam, mallory] = await Promise.all([suite.launch({ wav: wav.a }), suite.launch({ wav: wav.b }), suite.launch({ wav: wav.a })]);
  const t = tess.page;
  await t.goto(`${suite.server.url}/`);
  await t.getByRole('textbox', { name: 'Your name' }).fill('Tess');
  await t.getByRole('button', { name: 'Create lesson room' }).click();
  await t.getByRole('button', { name: 'Leave' }).waitFor({ timeout: 20_000 });
  const room = decodeURIComponent(new URL(t.url()).hash.replace(/^#room=/, ''));
  expect(room).toMatch(/^lesson-/);
  await expect(t.getByTestId('lesson-status')).toHaveText('Lesson room: you are the teacher', { timeout: 10_000 });

  // Newcomers wait: no audio link with anyone until the teacher lets them in.
  await joinRoom(sam.page, suite.server.url, room, 'Sam', { query: '' });
  await joinRoom(mallory.page, suite.server.url, room, 'Mallory', { query: '' });
  for (const p of [sam.page, mallory.page]) await expect(p.getByTestId('lesson-status')).toHaveText('Waiting for Tess to let you in', { timeout: 15_000 });
  await expect(member(t, 'Sam')).toHaveAttribute('data-standing', 'waiting');
  await t.waitForTimeout(3000);
  expect(await Promise.all([tess, sam, mallory].map((p) => links(p.page))), 'no audio links while everyone waits').toEqual([0, 0, 0]);
  const [tessId, samId] = (await Promise.all([tess, sam].map((p) => inPage<number>(p.page, 'return s.room.clientId;')))) as [number, number];
  const firstState = await inPage<unknown>(mallory.page, "return JSON.parse(JSON.stringify(s.room.lesson.get('state')));");

  // Tess lets Sam in: Tess and Sam link; Mallory still waits.
  await member(t, 'Sam').getByRole('button', { name: 'Let in' }).click();
  await expect(sam.page.getByTestId('lesson-status')).toHaveText('In the lesson (teacher: Tess)', { timeout: 10_000 });
  await expect.poll(() => links(t), { timeout: 30_000 }).toBe(1);
  await expect.poll(() => links(sam.page), { timeout: 30_000 }).toBe(1);
  await expect.poll(() => levelOf(t, samId), { timeout: 15_000, message: "Tess hears Sam's tone" }).toBeGreaterThan(20);

  // Mallory, without the key, writes the room's document directly: (1) the teacher's last state with
  // herself added to the admitted, under the teacher's signature; (2) the first state again (a replay);
  // (3) a request to Sam's mixer, as if she were his paired remote.
  await inPage(mallory.page, `const cur = s.room.lesson.get('state'); const body = JSON.parse(cur.body); body.admitted.push(s.room.clientId); s.room.lesson.set('state', { ...cur, body: JSON.stringify(body) });`);
  await mallory.page.waitForTimeout(1500);
  await inPage(mallory.page, `s.room.lesson.set('state', ${JSON.stringify(firstState)});`);
  await mallory.page.waitForTimeout(1500);
  await inPage(mallory.page, `s.room.control.set('${samId}:master', { seq: 1, from: s.room.clientId, master: 0 });`);
  await t.waitForTimeout(3000);
  await expect(mallory.page.getByTestId('lesson-status')).toHaveText('Waiting for Tess to let you in');
  await expect(sam.page.getByTestId('lesson-status')).toHaveText('In the lesson (teacher: Tess)');
  expect(await Promise.all([tess, sam, mallory].map((p) => links(p.page))), 'the forged admission opened no link').toEqual([1, 1, 0]);
  expect(await inPage<number>(sam.page, 'return s.choices.master;'), "Sam's output volume is his own").toBe(1);
  for (const p of [tess, sam, mallory]) {
    const log = await logText(p.page);
    const who = p === mallory ? 'you' : 'Mallory';
    expect(log, 'the tampered state is logged as ignored').toContain(`${who} wrote a lesson change not signed by the teacher (bad signature): ignored`);
    expect(log, 'the replay is logged as ignored').toContain(`${who} put back an older lesson state (a replay): ignored`);
  }
  expect(await logText(sam.page)).toContain('Mallory tried to change your mixer (only your own paired remote or the teacher may): ignored');
  // Every device put the teacher's state back: a newcomer reading the document finds the real one.
  const restored = await inPage<{ body: string }>(t, "return s.room.lesson.get('state');");
  expect((JSON.parse(restored.body) as { admitted: number[] }).admitted).toEqual([samId]);
  // Nor can she sign a command: her app holds no teacher key.
  expect(await inPage<string>(mallory.page, `try { await s.lessonCommand({ kind: 'admit', id: s.room.clientId }); return 'done'; } catch (e) { return e.message; }`)).toBe('Only the teacher can do that.');

  // Mute: Sam's device sends silence, and he cannot unmute himself.
  await member(t, 'Sam').getByRole('button', { name: 'Mute' }).click();
  await expect(sam.page.getByTestId('lesson-muted')).toBeVisible({ timeout: 10_000 });
  await expect.poll(() => levelOf(t, samId), { timeout: 10_000, message: "Tess hears no more of Sam" }).toBe(0);
  await sam.page.getByRole('button', { name: 'Mute', exact: true }).click(); // his own mute on, then off again
  await sam.page.getByRole('button', { name: 'Unmute', exact: true }).click();
  await t.waitForTimeout(2000);
  expect(await levelOf(t, samId), 'still muted by the teacher').toBe(0);
  await member(t, 'Sam').getByRole('button', { name: 'Unmute' }).click();
  await expect(sam.page.getByTestId('lesson-muted')).toHaveCount(0, { timeout: 10_000 });
  await expect.poll(() => levelOf(t, samId), { timeout: 10_000 }).toBeGreaterThan(20);

  // Tess sets Sam's mix: his output volume, his depth, how loud he hears her.
  await member(t, 'Sam').getByRole('button', { name: 'Set mix' }).click();
  const form = t.getByTestId('lesson-mix-form');
  await form.getByLabel('Their output volume (%)').fill('50');
  await form.getByLabel(/Their jitter depth/).fill('6');
  await form.getByLabel('How loud they hear you (%)').fill('30');
  await form.getByRole('button', { name: 'Set their mix' }).click();
  await expect(sam.page.getByTestId('lesson-mix')).toBeVisible({ timeout: 10_000 });
  const mix = await inPage<{ master: number; depth: number; adaptive: boolean; tess: unknown }>(sam.page, `return { master: s.choices.master, depth: s.choices.depth, adaptive: s.choices.adaptive, tess: s.choices.mix.get('${tessId}') };`);
  expect(mix).toEqual({ master: 0.5, depth: 6, adaptive: false, tess: { gain: 0.3, muted: false } });
  expect(await logText(sam.page)).toContain('the teacher (Tess) set your mix: output 50 %, depth 6 quanta, Tess at 30 %');
  await sam.page.getByRole('button', { name: 'Take back control' }).click();
  const own = await inPage<{ master: number; adaptive: boolean }>(sam.page, 'return { master: s.choices.master, adaptive: s.choices.adaptive };');
  expect(own, 'his own mix again').toEqual({ master: 1, adaptive: true });

  // Hand-over: Sam is the teacher; Tess's device can no longer command; Sam lets Mallory in, then removes her.
  await member(t, 'Sam').getByRole('button', { name: 'Make teacher' }).click();
  await expect(sam.page.getByTestId('lesson-status')).toHaveText('Lesson room: you are the teacher', { timeout: 10_000 });
  await expect(t.getByTestId('lesson-status')).toHaveText('In the lesson (teacher: Sam)', { timeout: 10_000 });
  await expect(mallory.page.getByTestId('lesson-status')).toHaveText('Waiting for Sam to let you in', { timeout: 10_000 });
  expect(await inPage<string>(t, `try { await s.lessonCommand({ kind: 'remove', id: ${samId} }); return 'done'; } catch (e) { return e.message; }`)).toBe('Only the teacher can do that.');
  await member(sam.page, 'Mallory').getByRole('button', { name: 'Let in' }).click();
  await expect(mallory.page.getByTestId('lesson-status')).toHaveText('In the lesson (teacher: Sam)', { timeout: 10_000 });
  await expect.poll(() => links(mallory.page), { timeout: 30_000 }).toBe(2);
  await member(sam.page, 'Mallory').getByRole('button', { name: 'Remove' }).click();
  await expect(mallory.page.getByTestId('lesson-status')).toHaveText('The teacher removed you from this lesson', { timeout: 10_000 });
  await expect.poll(() => links(mallory.page), { timeout: 15_000 }).toBe(0);
  await expect.poll(() => links(t), { timeout: 15_000 }).toBe(1);
  // The teacher's device comes back (Leave, then Join: a new client id). Its key still signs: it says
  // where the teacher is now, and the lesson goes on with Tess still in.
  await sam.page.getByRole('button', { name: 'Leave' }).click();
  await joinRoom(sam.page, suite.server.url, room, 'Sam', { query: '' });
  await expect(sam.page.getByTestId('lesson-status')).toHaveText('Lesson room: you are the teacher', { timeout: 15_000 });
  await expect(t.getByTestId('lesson-status')).toHaveText('In the lesson (teacher: Sam)', { timeout: 15_000 });
  await expect.poll(() => links(t), { timeout: 30_000 }).toBe(1);
  await expect.poll(() => links(sam.page), { timeout: 30_000 }).toBe(1);
  const log = await logText(t);
  for (const line of ['lesson room: you are the teacher', 'the teacher (you) let Sam in', 'the teacher (you) muted Sam', 'Sam is the teacher now', 'the teacher (Sam) let Mallory in', 'the teacher (Sam) removed Mallory']) expect(log).toContain(line);
  console.log(`lesson log at Tess:\n${log.split('\n').filter((l) => /teacher|lesson|ignored/.test(l)).join('\n')}`);
});
