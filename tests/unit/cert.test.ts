// Self-signed certificate for `--https` (server/cert.ts): generated with the machine's names,
// stored with a private key file only the owner can read, reused on the next start, regenerated
// when it no longer covers a name, is about to expire, or is damaged; and it really serves TLS.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { connect } from 'node:tls';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCertNames, lanIPv4, loadOrCreateCert, reuseProblem, type CertNames } from '../../server/cert.ts';

const dirs: string[] = [];
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'tutti-cert-test-'));
  dirs.push(d);
  return d;
}
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const NAMES: CertNames = { dns: ['localhost', 'studio-pc', 'studio-pc.local'], ips: ['127.0.0.1', '::1', '192.168.1.20'] };

describe('certificate generation', () => {
  test('covers every name and address, key file private, SHA-256 EC key', async () => {
    const dir = freshDir();
    const c = await loadOrCreateCert(dir, NAMES);
    assert.equal(c.created, true);
    const x = new X509Certificate(readFileSync(c.certPath));
    for (const d of NAMES.dns) assert.ok(x.checkHost(d, { wildcards: false }), `covers ${d}`);
    for (const ip of NAMES.ips) assert.ok(x.checkIP(ip), `covers ${ip}`);
    assert.equal(x.checkIP('192.168.1.21'), undefined, 'not other addresses');
    assert.equal(x.checkHost('example.org'), undefined, 'not other names');
    assert.equal(x.publicKey.asymmetricKeyType, 'ec');
    assert.equal(statSync(c.keyPath).mode & 0o777, 0o600);
    assert.equal(c.fingerprint256, x.fingerprint256);
    const days = (c.validTo.getTime() - Date.now()) / 86_400_000;
    assert.ok(days > 360 && days < 366, `valid about a year, got ${days.toFixed(1)} days`);
  });

  test('the default names include localhost, loopback and this machine', () => {
    const n = defaultCertNames();
    assert.ok(n.dns.includes('localhost'));
    assert.ok(n.ips.includes('127.0.0.1'));
    for (const ip of lanIPv4()) assert.ok(n.ips.includes(ip), `LAN address ${ip}`);
    const host = hostname().toLowerCase();
    if (host !== 'localhost') assert.ok(n.dns.includes(host), `host name ${host}`);
  });

  test('rejects a name that is not an IP address in the IP list', async () => {
    await assert.rejects(loadOrCreateCert(freshDir(), { dns: ['localhost'], ips: ['not-an-ip'] }), /not an IP address: not-an-ip/);
  });
});

describe('certificate reuse', () => {
  test('a second start reuses the stored certificate and key unchanged', async () => {
    const dir = freshDir();
    const first = await loadOrCreateCert(dir, NAMES);
    const second = await loadOrCreateCert(dir, NAMES);
    assert.equal(second.created, false);
    assert.equal(second.cert, first.cert);
    assert.equal(second.key, first.key);
    // A subset of the names is covered too (e.g. a network interface went down).
    const third = await loadOrCreateCert(dir, { dns: ['localhost'], ips: ['127.0.0.1'] });
    assert.equal(third.created, false);
  });

  test('a new LAN address regenerates it, covering the new address', async () => {
    const dir = freshDir();
    const first = await loadOrCreateCert(dir, NAMES);
    const moved: CertNames = { dns: NAMES.dns, ips: ['127.0.0.1', '::1', '10.0.0.7'] };
    assert.equal(reuseProblem(first.cert, first.key, moved, new Date()), 'does not cover 10.0.0.7');
    const second = await loadOrCreateCert(dir, moved);
    assert.equal(second.created, true);
    assert.notEqual(second.cert, first.cert);
    assert.ok(new X509Certificate(second.cert).checkIP('10.0.0.7'));
    assert.equal(readFileSync(join(dir, 'cert.pem'), 'utf8'), second.cert, 'stored for the next start');
  });

  test('a certificate within a week of expiry is renewed', async () => {
    const dir = freshDir();
    const first = await loadOrCreateCert(dir, NAMES);
    const later = new Date(first.validTo.getTime() - 3 * 86_400_000);
    assert.equal(reuseProblem(first.cert, first.key, NAMES, later), 'expires within a week');
    const renewed = await loadOrCreateCert(dir, NAMES, later);
    assert.equal(renewed.created, true);
    assert.ok(renewed.validTo.getTime() > first.validTo.getTime());
  });

  test('a damaged certificate or a key from another certificate is replaced', async () => {
    const dir = freshDir();
    const first = await loadOrCreateCert(dir, NAMES);
    writeFileSync(join(dir, 'cert.pem'), 'garbage');
    const repaired = await loadOrCreateCert(dir, NAMES);
    assert.equal(repaired.created, true);

    const other = await loadOrCreateCert(freshDir(), NAMES);
    assert.equal(reuseProblem(repaired.cert, other.key, NAMES, new Date()), 'key does not match certificate');
    writeFileSync(join(dir, 'key.pem'), other.key);
    const again = await loadOrCreateCert(dir, NAMES);
    assert.equal(again.created, true);
    assert.notEqual(again.cert, first.cert);
  });
});

test('serves TLS that a client trusting only this certificate verifies, by name and by IP', async () => {
  const c = await loadOrCreateCert(freshDir(), NAMES);
  const server = createServer({ key: c.key, cert: c.cert }, (_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    for (const servername of ['localhost', undefined]) {
      const authorized = await new Promise<boolean>((resolve, reject) => {
        const s = connect({ host: '127.0.0.1', port, ca: c.cert, ...(servername ? { servername } : {}) }, () => {
          resolve(s.authorized);
          s.end();
        });
        s.on('error', reject);
      });
      assert.equal(authorized, true, `verified as ${servername ?? '127.0.0.1'}`);
    }
    await assert.rejects(
      new Promise((resolve, reject) => {
        const s = connect({ host: '127.0.0.1', port, ca: c.cert, servername: 'example.org' }, () => resolve(s));
        s.on('error', reject);
      }),
      /does not match|not in the cert's altnames/i,
    );
  } finally {
    server.close();
  }
});
