// The installable, offline-capable app (workers/sw/sw.ts, vite-plugin-pwa injectManifest) in real
// Chromium against the real server: installability (CDP), manifest icons, the precache holding the
// network-worker and worklet bundles, an offline reload that still starts the audio engine, COOP/COEP
// added by the service worker on a host that sends none, and the update prompt for a waiting version.

import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchPeer, launchPersistentPeer } from '../support/browsers.ts';
import { startServer, type RunningServer } from '../support/server.ts';
import { startStaticServer, type StaticServer } from '../support/static-server.ts';

const DIST_ASSETS = fileURLToPath(new URL('../../dist/assets', import.meta.url));

let peer: { page: Page; context: BrowserContext; close(): Promise<void> } | null = null;
let server: RunningServer | null = null;
let statics: StaticServer | null = null;
test.afterEach(async () => {
  await peer?.close();
  await server?.close();
  await statics?.close();
  peer = server = statics = null;
});

/** Wait until the service worker controls the page (first install claims it). */
async function waitForControl(page: Page): Promise<void> {
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30_000 });
}

/** Fill the join form and join; resolves when the room view shows. */
async function join(page: Page, room: string): Promise<void> {
  await page.getByRole('textbox', { name: 'Your name' }).fill('Pat');
  await page.getByRole('textbox', { name: 'Room' }).fill(room);
  await page.getByRole('button', { name: 'Join' }).click();
  await page.getByRole('button', { name: 'Leave' }).waitFor({ timeout: 20_000 });
}

test('installable: no installability errors, manifest icons load at their sizes, shell precached', async () => {
  server = await startServer();
  // Installing needs a profile on disk: Chromium does not install from incognito contexts.
  const profile = mkdtempSync(joinPath(tmpdir(), 'tutti-pwa-'));
  const persistent = await launchPersistentPeer(profile);
  peer = { ...persistent, close: () => persistent.close().finally(() => rmSync(profile, { recursive: true, force: true })) };
  const { page } = peer;
  await page.goto(server.url);
  await waitForControl(page);

  const cdp = await page.context().newCDPSession(page);
  const { installabilityErrors } = (await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: unknown[] };
  expect(installabilityErrors).toEqual([]);

  const { url: manifestUrl, data } = (await cdp.send('Page.getAppManifest')) as { url: string; data: string };
  expect(manifestUrl).toBe(`${server.url}/manifest.webmanifest`);
  const manifest = JSON.parse(data) as {
    name: string; short_name: string; display: string; theme_color: string; start_url: string;
    icons: { src: string; sizes: string; type: string; purpose: string }[]; shortcuts: { name: string; url: string }[];
  };
  expect(manifest).toMatchObject({ short_name: 'Tutti', display: 'standalone', theme_color: '#1d2733', start_url: '/' });
  expect(manifest.name).toContain('Tutti');
  expect(manifest.shortcuts.map((s) => s.name)).toEqual(['New lesson room', 'Join a room']);
  expect(manifest.icons.map((i) => `${i.sizes} ${i.purpose}`).sort()).toEqual(['192x192 any', '512x512 any', '512x512 maskable']);
  for (const icon of manifest.icons) {
    // Decoded by the browser, through the service worker: a real PNG of the declared size.
    const got = await page.evaluate(async (src) => {
      const res = await fetch(src);
      const bitmap = await createImageBitmap(await res.blob());
      return { type: res.headers.get('content-type'), size: `${bitmap.width}x${bitmap.height}` };
    }, icon.src);
    expect(got).toEqual({ type: 'image/png', size: icon.sizes });
  }

  // The precache holds the page bundle, the network worker and both worklets: every built JS file.
  const cached = await page.evaluate(async () => {
    const names = await caches.keys();
    const urls: string[] = [];
    for (const name of names) for (const req of await (await caches.open(name)).keys()) urls.push(`${name} ${new URL(req.url).pathname}`);
    return { names, urls };
  });
  const precache = cached.names.filter((n) => n.startsWith('tutti-precache-'));
  expect(precache).toHaveLength(1);
  const paths = cached.urls.filter((u) => u.startsWith(precache[0]!)).map((u) => u.split(' ')[1]);
  const built = readdirSync(DIST_ASSETS).filter((f) => f.endsWith('.js')).map((f) => `/assets/${f}`);
  expect(built.some((p) => /net\.worker-.*\.js$/.test(p))).toBe(true);
  expect(built.some((p) => /capture\.worklet-.*\.js$/.test(p))).toBe(true);
  expect(built.some((p) => /playback\.worklet-.*\.js$/.test(p))).toBe(true);
  for (const p of [...built, '/index.html', '/manifest.webmanifest', '/icon-192.png']) expect(paths).toContain(p);

  // The service worker's version is the precache's cache-name suffix.
  const version = await page.evaluate(async () => {
    const channel = new MessageChannel();
    const reply = new Promise<{ version: string }>((r) => (channel.port1.onmessage = (e) => r(e.data as { version: string })));
    navigator.serviceWorker.controller!.postMessage({ type: 'GET_VERSION' }, [channel.port2]);
    return (await reply).version;
  });
  expect(precache[0]).toBe(`tutti-precache-${version}`);
});

test('manifest shortcuts: each opens the join form at the control that finishes its job', async () => {
  server = await startServer();
  peer = await launchPeer();
  const { page } = peer;
  await page.goto(server.url);
  const shortcuts = await page.evaluate(async () => ((await (await fetch('/manifest.webmanifest')).json()) as { shortcuts: { name: string; url: string }[] }).shortcuts);
  const url = (name: string) => `${server!.url}${shortcuts.find((s) => s.name === name)!.url}`;
  const hint = page.getByTestId('hint');

  // First use, no name on this device: both shortcuts ask for the name first.
  for (const name of ['New lesson room', 'Join a room']) {
    await page.goto(url(name));
    await expect(page.getByRole('textbox', { name: 'Your name' })).toBeFocused();
    await expect(hint).toContainText('Enter your name');
    expect(new URL(page.url()).search, 'the action is dropped from the address once handled').toBe('');
  }

  // Join a room, with a known name: the room field, then Join.
  await page.evaluate(() => localStorage.setItem('tutti.name', 'Pat'));
  await page.goto(url('Join a room'));
  await expect(page.getByRole('textbox', { name: 'Room' })).toBeFocused();
  await expect(hint).toContainText('room name');

  // New lesson room, with a known name: Create lesson room has focus, and Enter opens a new room.
  await page.goto(url('New lesson room'));
  await expect(page.getByRole('button', { name: 'Create lesson room' })).toBeFocused();
  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'Leave' }).waitFor({ timeout: 20_000 });
  const room = decodeURIComponent(new URL(page.url()).hash.replace(/^#room=/, ''));
  expect(room, 'an unguessable room name').toMatch(/^[A-Za-z0-9_-]{16,}$/);

  // An unknown action is ignored: the plain join form, nothing focused for it, no hint.
  await page.goto(`${server.url}/?action=bogus`);
  await expect(page.getByRole('textbox', { name: 'Your name' })).toHaveValue('Pat');
  await expect(hint).toHaveCount(0);
});

test('offline: a reload loads the shell from the precache, isolated, and the audio engine starts', async () => {
  server = await startServer();
  peer = await launchPeer();
  const { page, context } = peer;
  await page.goto(`${server.url}/?room=offline-room`);
  await waitForControl(page);
  // Let the page fetch /config.json once so the runtime cache has it too.
  await page.evaluate(() => fetch('/config.json'));

  // No network at all: the browser context is offline and the server is gone.
  await server.close();
  server = null;
  await context.setOffline(true);
  await page.reload();
  await expect(page.getByRole('textbox', { name: 'Your name' })).toBeVisible();
  expect(await page.evaluate(() => ({ isolated: crossOriginIsolated, online: navigator.onLine, controlled: navigator.serviceWorker.controller !== null }))).toEqual({
    isolated: true,
    online: false,
    controlled: true,
  });
  expect(await page.getByRole('textbox', { name: 'Room' }).inputValue()).toBe('offline-room');
  // The server's config comes from the runtime cache (network first, cache when offline).
  expect(await page.evaluate(async () => (await fetch('/config.json')).json())).toEqual({ iceServers: [] });
  // Joining loads the network worker and both worklets, which can only come from the precache now.
  await join(page, 'offline-room');
  await expect(page.getByTestId('access')).not.toHaveText(/Connected/); // no server, no peers: the engine runs alone
  const scripts = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).filter((n) => /worklet|worker/.test(n)));
  expect(scripts.some((n) => /net\.worker-/.test(n))).toBe(true);
});

test("offline: a reload loads the shell and an existing room's notes (kept on this device by y-indexeddb)", async () => {
  server = await startServer();
  peer = await launchPeer();
  const { page, context } = peer;
  await page.goto(`${server.url}/`);
  await waitForControl(page);
  await join(page, 'offline-notes');
  const notes = page.getByRole('textbox', { name: 'Lesson notes' });
  await notes.fill('Bring the étude in G, bars 1–16');
  // y-indexeddb stores each update as it happens; give the write a moment to land.
  await page.waitForTimeout(1000);
  await page.getByRole('button', { name: 'Leave' }).click();

  await server.close();
  server = null;
  await context.setOffline(true);
  await page.reload();
  await expect(page.getByRole('textbox', { name: 'Your name' })).toBeVisible();
  await join(page, 'offline-notes');
  await expect(notes).toHaveValue('Bring the étude in G, bars 1–16', { timeout: 10_000 });
});

test('a host that sends no isolation headers: isolated after the service worker takes control', async () => {
  statics = await startStaticServer();
  // The host really sends none.
  const direct = await fetch(`${statics.url}/`);
  expect(direct.headers.get('cross-origin-embedder-policy')).toBeNull();
  expect(direct.headers.get('cross-origin-opener-policy')).toBeNull();

  peer = await launchPeer();
  const { page } = peer;
  await page.goto(statics.url);
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(false);
  await waitForControl(page);
  // The first visit cannot change its own headers: the page offers the one reload.
  const prompt = page.getByRole('status', { name: 'Reload needed' });
  await expect(prompt).toBeVisible();
  await prompt.getByRole('button', { name: 'Reload' }).click();
  await page.waitForFunction(() => crossOriginIsolated, null, { timeout: 15_000 });
  await expect(prompt).toBeHidden();
  const headers = await page.evaluate(async () => {
    const res = await fetch('/');
    return { coop: res.headers.get('cross-origin-opener-policy'), coep: res.headers.get('cross-origin-embedder-policy'), corp: res.headers.get('cross-origin-resource-policy') };
  });
  expect(headers).toEqual({ coop: 'same-origin', coep: 'require-corp', corp: 'same-origin' });
  // SharedArrayBuffer works: the audio engine starts (no signaling server on this host).
  await join(page, 'static-host');
});

/** The controlling service worker's cache version and the Tutti caches that exist. */
async function swCaches(page: Page): Promise<{ version: string; caches: string[] }> {
  return page.evaluate(async () => {
    const channel = new MessageChannel();
    const reply = new Promise<{ version: string }>((r) => (channel.port1.onmessage = (e) => r(e.data as { version: string })));
    navigator.serviceWorker.controller!.postMessage({ type: 'GET_VERSION' }, [channel.port2]);
    return { version: (await reply).version, caches: (await caches.keys()).filter((n) => n.startsWith('tutti-')).sort() };
  });
}

test('update prompt: a waiting new version takes over when accepted, reloads, and deletes the old caches', async () => {
  statics = await startStaticServer();
  peer = await launchPeer();
  const { page } = peer;
  await page.goto(statics.url);
  await waitForControl(page);
  await page.reload(); // isolated from here on
  await waitForControl(page);
  await expect(page.getByRole('status')).toHaveCount(0);
  const before = await swCaches(page);
  expect(before.caches).toContain(`tutti-precache-${before.version}`);

  // Publish a new build: same files except index.html's revision, as after an edit to the page.
  statics.swTransform = (text) => {
    const next = text.replace(/("revision":")[0-9a-f]{32}(","url":"index\.html")/, '$1' + '0'.repeat(32) + '$2');
    if (next === text) throw new Error('index.html entry not found in sw.js');
    return next;
  };
  const fetchesBefore = statics.swFetches;
  await page.evaluate(async () => {
    await (await navigator.serviceWorker.getRegistration())!.update();
  });
  const prompt = page.getByRole('status', { name: 'Update available' });
  await expect(prompt).toBeVisible({ timeout: 30_000 });
  expect(statics.swFetches).toBeGreaterThan(fetchesBefore);
  expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())!.waiting !== null)).toBe(true);
  // Still the old version in control while the new one waits: nothing deleted yet.
  expect((await swCaches(page)).caches).toContain(`tutti-precache-${before.version}`);

  await page.evaluate(() => ((window as unknown as { beforeUpdate: boolean }).beforeUpdate = true));
  const reloaded = page.waitForEvent('framenavigated');
  await prompt.getByRole('button', { name: 'Update now' }).click();
  await reloaded;
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null && crossOriginIsolated);
  expect(await page.evaluate(() => (window as unknown as { beforeUpdate?: boolean }).beforeUpdate)).toBeUndefined();
  expect(await page.evaluate(async () => {
    const reg = (await navigator.serviceWorker.getRegistration())!;
    return { waiting: reg.waiting !== null, active: reg.active?.state };
  })).toEqual({ waiting: false, active: 'activated' });
  await expect(page.getByRole('status', { name: 'Update available' })).toHaveCount(0);

  // The new version has its own caches; the old version's are gone.
  const after = await swCaches(page);
  expect(after.version).not.toBe(before.version);
  expect(after.caches).toContain(`tutti-precache-${after.version}`);
  expect(after.caches.filter((n) => n.includes(before.version))).toEqual([]);
});
