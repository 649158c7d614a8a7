// LAN lessons over HTTPS: `server/main.ts --https` (what `npm start -- --https` runs after the
// build) generates a self-signed certificate, serves the app and wss signaling on one port, and
// hands the page the ICE servers from TUTTI_ICE_SERVERS. Two browsers that accept the certificate
// get a secure, cross-origin-isolated page and find each other through wss.

import { expect, test } from '@playwright/test';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { joinRoom, launchPeer, type PeerBrowser } from '../support/browsers.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ICE = [{ urls: 'stun:127.0.0.1:3478' }];

let proc: ChildProcess | null = null;
let certDir = '';
let baseUrl = '';
let output = '';

test.beforeAll(async () => {
  certDir = mkdtempSync(join(tmpdir(), 'tutti-cert-'));
  proc = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--https'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', TUTTI_CERT_DIR: certDir, TUTTI_ICE_SERVERS: JSON.stringify(ICE) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 30_000);
    proc!.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      const m = /Tutti running at (https:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    proc!.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });
});

test.afterAll(async () => {
  if (proc && proc.exitCode === null) {
    const exited = new Promise((r) => proc!.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }
  rmSync(certDir, { recursive: true, force: true });
});

/** GET over TLS, trusting only the generated certificate (so host name and chain are verified). */
function httpsGet(url: string, ca: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the generated certificate verifies for the host, and the server sends the app, isolation headers and ICE config', async () => {
  expect(output).toMatch(/Generated self-signed certificate/);
  const ca = readFileSync(join(certDir, 'cert.pem'), 'utf8');
  const page = await httpsGet(`${baseUrl}/`, ca);
  expect(page.status).toBe(200);
  expect(page.body).toContain('<tutti-app>');
  expect(page.headers['cross-origin-opener-policy']).toBe('same-origin');
  expect(page.headers['cross-origin-embedder-policy']).toBe('require-corp');
  const config = await httpsGet(`${baseUrl}/config.json`, ca);
  expect(JSON.parse(config.body)).toEqual({ iceServers: ICE });
  const localhost = await httpsGet(baseUrl.replace('127.0.0.1', 'localhost'), ca);
  expect(localhost.status).toBe(200);
  // Without trusting the certificate, TLS verification fails: it really is self-signed.
  await expect(httpsGet(`${baseUrl}/`, '')).rejects.toThrow(/self[- ]signed|unable to verify|certificate/i);
});

test('two browsers that accept the certificate join over https and meet through wss signaling', async () => {
  const peers: PeerBrowser[] = [];
  try {
    for (let i = 0; i < 2; i++) peers.push(await launchPeer({ context: { ignoreHTTPSErrors: true } }));
    const [a, b] = peers as [PeerBrowser, PeerBrowser];
    // Record the ICE servers every RTCPeerConnection is created with (the browser's own class, observed).
    for (const p of peers) {
      await p.context.addInitScript(() => {
        const Native = RTCPeerConnection;
        const seen: unknown[] = [];
        (window as unknown as { iceSeen: unknown[] }).iceSeen = seen;
        window.RTCPeerConnection = class extends Native {
          constructor(config?: RTCConfiguration) {
            seen.push(config?.iceServers ?? null);
            super(config);
          }
        };
      });
    }
    await joinRoom(a.page, baseUrl, 'lan-lesson', 'Teacher', { query: '' });
    await joinRoom(b.page, baseUrl, 'lan-lesson', 'Student', { query: '' });
    for (const p of [a.page, b.page]) {
      expect(await p.evaluate(() => ({ secure: isSecureContext, isolated: crossOriginIsolated, protocol: location.protocol }))).toEqual({
        secure: true,
        isolated: true,
        protocol: 'https:',
      });
      // Signaling (wss) reached the other peer: the room reports both of us.
      await expect(p.getByTestId('access')).toHaveText(/Connected · 2 in the room/, { timeout: 20_000 });
    }
    await expect(a.page.locator('tutti-peer-strip')).toHaveCount(1, { timeout: 20_000 });
    await expect(b.page.locator('tutti-peer-strip')).toHaveCount(1, { timeout: 20_000 });
    // The page connected with the server's TUTTI_ICE_SERVERS (served as /config.json).
    for (const p of [a.page, b.page]) {
      await p.waitForFunction(() => (window as unknown as { iceSeen: unknown[] }).iceSeen.length > 0);
      for (const servers of await p.evaluate(() => (window as unknown as { iceSeen: unknown[] }).iceSeen)) expect(servers).toEqual(ICE);
    }
    const sockets = (await b.page.evaluate(async () => (await (await fetch('/healthz')).json()) as { signaling: { sockets: number } })).signaling.sockets;
    expect(sockets).toBeGreaterThanOrEqual(2);
  } finally {
    for (const p of peers) await p.close();
  }
});

test('settings: the server default ICE servers show; a bad override is refused with a reason, a good one is kept', async () => {
  const peer = await launchPeer({ context: { ignoreHTTPSErrors: true } });
  try {
    const { page } = peer;
    await page.goto(baseUrl);
    await page.getByText('Connection settings').click();
    await expect(page.getByText('Server default STUN/TURN: stun:127.0.0.1:3478')).toBeVisible();
    const box = page.getByRole('textbox', { name: 'STUN/TURN servers for this device (JSON)' });

    await box.fill('[{"urls": "http://turn.example.org"}]');
    await page.getByRole('button', { name: 'Save servers' }).click();
    await expect(page.getByText('ICE server 1: "http://turn.example.org" is not a stun:, stuns:, turn: or turns: URL.')).toBeVisible();
    await expect(box).toHaveAttribute('aria-invalid', 'true');
    expect(await page.evaluate(() => localStorage.getItem('tutti.iceServers'))).toBeNull();

    await box.fill('[{"urls": "turn:turn.example.org:3478"}]');
    await page.getByRole('button', { name: 'Save servers' }).click();
    await expect(page.getByText('ICE server 1: a TURN server needs "username" and "credential".')).toBeVisible();

    await box.fill('[{"urls": ["turn:turn.example.org:3478"], "username": "u", "credential": "p"}]');
    await page.getByRole('button', { name: 'Save servers' }).click();
    await expect(page.getByText('Saved 1 server for this device.')).toBeVisible();
    await expect(box).toHaveAttribute('aria-invalid', 'false');
    expect(JSON.parse((await page.evaluate(() => localStorage.getItem('tutti.iceServers')))!)).toEqual([{ urls: ['turn:turn.example.org:3478'], username: 'u', credential: 'p' }]);

    // After a reload the override is still there and can be dropped again.
    await page.reload();
    await page.getByText('Connection settings').click();
    await expect(page.getByText('This device overrides it.')).toBeVisible();
    await page.getByRole('button', { name: 'Use server default' }).click();
    expect(await page.evaluate(() => localStorage.getItem('tutti.iceServers'))).toBeNull();
  } finally {
    await peer.close();
  }
});
