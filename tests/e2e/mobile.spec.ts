// Phone-sized control view, accessibility, and remote mode, in real browsers on the real server.
// Screenshots go to tests/.tmp/screens/ (look at them).

import { expect, test, type Page } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { StatsMessage } from '../../src/shared/worker-protocol.ts';
import { joinRoom } from '../support/browsers.ts';
import { TEST_TMP, roomSuite } from '../support/suite.ts';

const suite = roomSuite('mobile');
const { wav, launch } = suite;
const screens = join(TEST_TMP, 'screens'); // kept between runs (Playwright empties test-results/)
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

test.beforeAll(() => {
  mkdirSync(screens, { recursive: true });
});

interface Target {
  what: string;
  name: string;
  w: number;
  h: number;
}

/** Every visible interactive element, through all shadow roots, with its accessible name and size. */
function targets(page: Page): Promise<Target[]> {
  return page.evaluate(() => {
    const out: Target[] = [];
    const sel = 'button, select, textarea, summary, input:not([type=checkbox]):not([type=radio]):not([type=hidden]), label:has(> input[type=checkbox]), label:has(> input[type=radio])';
    const nameOf = (el: Element): string => {
      const aria = el.getAttribute('aria-label');
      if (aria) return aria;
      const labelled = el.getAttribute('aria-labelledby');
      if (labelled) return (el.getRootNode() as Document | ShadowRoot).getElementById(labelled)?.textContent?.trim() ?? '';
      const labels = (el as HTMLInputElement).labels;
      if (labels && labels.length) return [...labels].map((l) => l.textContent?.trim()).join(' ');
      return el.textContent?.trim() ?? '';
    };
    const walk = (root: Document | ShadowRoot): void => {
      for (const el of root.querySelectorAll(sel)) {
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.height === 0) continue;
        out.push({ what: `${el.tagName.toLowerCase()}${el.getAttribute('type') ? `[${el.getAttribute('type')}]` : ''}`, name: nameOf(el), w: Math.round(r.width), h: Math.round(r.height) });
      }
      for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot);
    };
    walk(document);
    return out;
  });
}

async function assertPhoneFriendly(page: Page, where: string): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.scrollingElement!.scrollWidth, innerWidth: window.innerWidth }));
  expect(scrollWidth, `${where}: no horizontal scroll`).toBeLessThanOrEqual(innerWidth);
  const ts = await targets(page);
  expect(ts.length).toBeGreaterThan(3);
  const small = ts.filter((t) => t.w < 44 || t.h < 44);
  expect(small, `${where}: touch targets under 44 px`).toEqual([]);
  const unnamed = ts.filter((t) => t.name.length === 0);
  expect(unnamed, `${where}: controls without a label`).toEqual([]);
}

function stats(page: Page): Promise<StatsMessage | null> {
  return page.evaluate(() => (document.querySelector('tutti-app') as unknown as { stats: StatsMessage | null }).stats);
}

/** The post-gain level meter of one remote peer's strip (0–100), read from the page. */
function peerLevel(page: Page, name: string): Promise<number> {
  return page.evaluate((name) => {
    const strip = [...document.querySelector('tutti-app')!.shadowRoot!.querySelector('tutti-room')!.shadowRoot!.querySelectorAll('tutti-peer-strip')].find((el) => (el as unknown as { member: { name: string } }).member.name === name);
    return strip ? Number(strip.shadowRoot!.querySelector('tutti-meter')!.getAttribute('aria-valuenow')) : -1;
  }, name);
}

test('phone width 390×844: compact room and join views, no horizontal scroll, touch targets ≥ 44 px, all labelled; Space mutes except in notes', async () => {
  const phone = await launch({ wav: wav.a, viewport: PHONE, mobile: true });
  const desk = await launch({ wav: wav.b, viewport: DESKTOP });
  const room = 'mobile-' + Date.now();
  await phone.page.goto(`${suite.server.url}/?test=tap`);
  await phone.page.getByRole('textbox', { name: 'Your name' }).fill('Pia');
  await assertPhoneFriendly(phone.page, 'join form');
  await phone.page.screenshot({ path: join(screens, 'join-390x844.png'), fullPage: true });

  await joinRoom(phone.page, suite.server.url, room, 'Pia', { role: 'Student', instrument: 'Cello' });
  await joinRoom(desk.page, suite.server.url, room, 'Daniel Longname-Bartholomew', { role: 'Teacher', instrument: 'Piano' });
  await expect(phone.page.locator('tutti-peer-strip')).toContainText('Daniel', { timeout: 20_000 });
  await expect.poll(async () => ((await stats(phone.page))?.peers ?? []).filter((p) => p.framesPerSecond > 300).length, { timeout: 30_000 }).toBe(1);
  await expect(phone.page.getByRole('img', { name: /^Connection (good|fair|poor)$/ })).toBeVisible();
  await phone.page.getByRole('textbox', { name: 'New setlist item' }).fill('Scales in thirds, slowly');
  await phone.page.getByRole('button', { name: 'Add' }).click();
  await phone.page.getByText('Share and settings').click();
  await assertPhoneFriendly(phone.page, 'room view');
  await phone.page.screenshot({ path: join(screens, 'room-390x844.png'), fullPage: true });
  await desk.page.getByText('Share and settings').click();
  await desk.page.screenshot({ path: join(screens, 'room-1280x800.png'), fullPage: true });

  // Keyboard: Space toggles mute from anywhere but a text field; typing in the notes never mutes.
  const mute = phone.page.getByRole('button', { name: /^(Mute|Unmute)$/ });
  await expect(mute).toHaveAttribute('aria-pressed', 'false');
  await phone.page.locator('h1').click();
  await phone.page.keyboard.press('Space');
  await expect(mute).toHaveAttribute('aria-pressed', 'true');
  await expect(desk.page.getByTestId('roster')).toContainText('muted');
  await phone.page.getByRole('textbox', { name: 'Lesson notes' }).click();
  await phone.page.keyboard.type('a b c');
  await expect(phone.page.getByRole('textbox', { name: 'Lesson notes' })).toHaveValue('a b c');
  await expect(mute).toHaveAttribute('aria-pressed', 'true');
  // Tab reaches the mute button and Enter operates it.
  await mute.focus();
  await phone.page.keyboard.press('Enter');
  await expect(mute).toHaveAttribute('aria-pressed', 'false');
});

test('remote mode: a phone paired by QR link changes the desktop participant\'s per-peer volume and depth and records a take on their device, with no audio of its own', async () => {
  const alice = await launch({ wav: wav.a, viewport: DESKTOP });
  const bob = await launch({ wav: wav.b });
  const phone = await launch({ viewport: PHONE, mobile: true, omitArgs: ['--use-fake-device-for-media-stream'] });
  const room = 'remote-' + Date.now();
  await joinRoom(alice.page, suite.server.url, room, 'Alice', { password: 'duet' });
  await joinRoom(bob.page, suite.server.url, room, 'Bob', { password: 'duet' });
  await expect.poll(() => peerLevel(alice.page, 'Bob'), { timeout: 30_000 }).toBeGreaterThan(30);

  // Alice shows a pairing code; the phone opens its link (the code's content).
  await alice.page.getByText('Share and settings').click();
  await alice.page.getByRole('button', { name: 'Pair a phone as remote control' }).click();
  const pairing = alice.page.getByRole('img', { name: 'QR code of the remote pairing link' });
  await expect(pairing).toBeVisible();
  const link = (await alice.page.getByLabel('Remote pairing link', { exact: true }).textContent())!;
  expect(link).toMatch(/#room=.*&key=duet&remote=\d+$/);
  await phone.page.goto(link);
  await phone.page.getByRole('textbox', { name: 'Your name' }).fill("Alice's phone");
  await phone.page.getByRole('button', { name: 'Connect remote' }).click();
  await expect(phone.page.getByTestId('remote-target')).toHaveText('Controlling Alice', { timeout: 20_000 });
  await expect(alice.page.getByTestId('roster')).toContainText("Alice's phone · remote control");
  // The phone has no audio: no network worker, no microphone, and nobody has an audio link to it.
  expect(phone.page.workers().length).toBe(0);
  expect(await phone.page.evaluate(() => (document.querySelector('tutti-app') as unknown as { session: { engine?: unknown } }).session.engine === undefined)).toBe(true);
  expect(((await stats(alice.page))?.peers ?? []).length).toBe(1);
  await assertPhoneFriendly(phone.page, 'remote view');
  await phone.page.screenshot({ path: join(screens, 'remote-390x844.png'), fullPage: true });

  // Volume of Bob to 0 on the phone: Alice's mixer applies it (slider moves, Bob's post-gain meter falls to 0).
  await phone.page.getByRole('slider', { name: 'Volume of Bob' }).fill('0');
  await expect(alice.page.getByRole('slider', { name: 'Volume of Bob' })).toHaveValue('0', { timeout: 10_000 });
  await expect.poll(() => peerLevel(alice.page, 'Bob'), { timeout: 10_000 }).toBe(0);
  // Bob still hears Alice: the change is Alice's own mix only.
  expect(((await stats(bob.page))?.peers ?? [])[0]?.framesPerSecond ?? 0).toBeGreaterThan(300);
  // Back up, and a depth change reaches Alice's playout.
  await phone.page.getByRole('slider', { name: 'Volume of Bob' }).fill('1');
  await expect.poll(() => peerLevel(alice.page, 'Bob'), { timeout: 10_000 }).toBeGreaterThan(30);
  // The depth in use is the automatic one, and the phone says so (not the manual fallback, 8).
  await expect(phone.page.getByText(/Jitter buffer of Alice: automatic, now \d+/)).toBeVisible({ timeout: 10_000 });
  await phone.page.getByRole('slider', { name: /Jitter buffer of Alice/ }).fill('12');
  await expect.poll(async () => (await stats(alice.page))?.peers[0]?.depth, { timeout: 10_000 }).toBe(12);
  await expect(phone.page.getByText(/Jitter buffer of Alice: 12/)).toBeVisible();

  // Record from the phone: the take runs on Alice's device (her recorder shows it), the phone
  // follows its elapsed time and size, and stops it; the take is Alice's, with all its tracks.
  await phone.page.getByRole('button', { name: 'Record a take' }).click();
  await expect(alice.page.getByRole('button', { name: 'Stop recording' })).toBeVisible({ timeout: 10_000 });
  await expect(phone.page.getByTestId('remote-recording')).toHaveText(/● 0:0[3-9] · [\d.]+ MB/, { timeout: 15_000 });
  await assertPhoneFriendly(phone.page, 'remote view, recording');
  await phone.page.getByRole('button', { name: 'Stop recording' }).click();
  await expect(alice.page.getByRole('button', { name: 'Record a take' })).toBeVisible({ timeout: 10_000 });
  await expect(phone.page.getByRole('button', { name: 'Record a take' })).toBeVisible();
  const take = alice.page.locator('li[data-take]');
  await expect(take).toHaveCount(1);
  for (const name of ['input', 'mix', 'Bob']) await expect(take.getByRole('button', { name: new RegExp(`^Download ${name} \\(`) })).toHaveCount(1);
  expect(phone.page.workers().length, 'the phone still runs no worker: it recorded nothing itself').toBe(0);
});
