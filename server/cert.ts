// Node: the self-signed TLS certificate for `npm start -- --https` (LAN lessons without internet:
// getUserMedia, service workers and SharedArrayBuffer need a secure context). Generated once into
// a folder (default .tutti/cert/, gitignored) and reused while it is valid for at least another
// week and covers every name this machine answers to now; otherwise it is regenerated.

import { X509Certificate, createPrivateKey } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { isIP } from 'node:net';
import { generate } from 'selfsigned';

export interface CertNames {
  dns: string[];
  ips: string[];
}

export interface LoadedCert {
  key: string;
  cert: string;
  /** True when this call generated a new certificate, false when the stored one was reused. */
  created: boolean;
  certPath: string;
  keyPath: string;
  /** SHA-256 fingerprint, to compare with what a browser shows. */
  fingerprint256: string;
  validTo: Date;
}

const VALID_DAYS = 365;
const RENEW_BEFORE_MS = 7 * 24 * 3600 * 1000;

/** This machine's non-internal IPv4 addresses (what phones on the LAN connect to). */
export function lanIPv4(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) out.push(a.address);
  }
  return out;
}

/** Names the certificate must cover: localhost, the host name (and .local), loopback, LAN IPv4. */
export function defaultCertNames(): CertNames {
  const host = hostname().toLowerCase();
  const dns = ['localhost', ...(host && host !== 'localhost' ? [host, ...(host.includes('.') ? [] : [`${host}.local`])] : [])];
  return { dns, ips: ['127.0.0.1', '::1', ...lanIPv4()] };
}

/** Why a stored certificate cannot be reused, or null if it can. */
export function reuseProblem(certPem: string, keyPem: string, names: CertNames, now: Date): string | null {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(certPem);
    if (!x509.checkPrivateKey(createPrivateKey(keyPem))) return 'key does not match certificate';
  } catch (err) {
    return `unreadable: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (new Date(x509.validTo).getTime() - now.getTime() < RENEW_BEFORE_MS) return 'expires within a week';
  if (new Date(x509.validFrom).getTime() > now.getTime()) return 'not valid yet';
  for (const d of names.dns) if (!x509.checkHost(d, { wildcards: false })) return `does not cover ${d}`;
  for (const ip of names.ips) if (!x509.checkIP(ip)) return `does not cover ${ip}`;
  return null;
}

/** Load the certificate from `dir`, or generate (and store) a new one covering `names`. */
export async function loadOrCreateCert(dir: string, names: CertNames = defaultCertNames(), now = new Date()): Promise<LoadedCert> {
  for (const ip of names.ips) if (!isIP(ip)) throw new Error(`not an IP address: ${ip}`);
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  let created = false;
  let cert = existsSync(certPath) ? readFileSync(certPath, 'utf8') : '';
  let key = existsSync(keyPath) ? readFileSync(keyPath, 'utf8') : '';
  if (!cert || !key || reuseProblem(cert, key, names, now) !== null) {
    const notBeforeDate = new Date(now.getTime() - 60_000);
    const pems = await generate([{ name: 'commonName', value: 'Tutti (self-signed, LAN)' }, { name: 'organizationName', value: 'Tutti' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notBeforeDate,
      notAfterDate: new Date(notBeforeDate.getTime() + VALID_DAYS * 24 * 3600 * 1000),
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        { name: 'subjectAltName', altNames: [...names.dns.map((value) => ({ type: 2 as const, value })), ...names.ips.map((ip) => ({ type: 7 as const, ip }))] },
      ],
    });
    cert = pems.cert;
    key = pems.private;
    mkdirSync(dir, { recursive: true });
    writeFileSync(keyPath, key, { mode: 0o600 });
    chmodSync(keyPath, 0o600);
    writeFileSync(certPath, cert);
    created = true;
  }
  const x509 = new X509Certificate(cert);
  return { key, cert, created, certPath, keyPath, fingerprint256: x509.fingerprint256, validTo: new Date(x509.validTo) };
}
