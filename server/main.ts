// `npm start` / `npm run signal`: one port for the app and its signaling server.
// PORT (default 8080), HOST (default 0.0.0.0), TUTTI_ALLOWED_ORIGINS (comma-separated origins
// allowed besides the page's own and localhost; `*` = any),
// TUTTI_ICE_SERVERS (JSON, served to the page as /config.json), `--https` or TUTTI_HTTPS=1 (HTTPS
// and wss with a self-signed certificate kept in TUTTI_CERT_DIR, default .tutti/cert/),
// TUTTI_OPEN_ROOMS=0 (no open-rooms list on this server).

import { fileURLToPath } from 'node:url';
import { defaultCertNames, lanIPv4, loadOrCreateCert } from './cert.ts';
import { ConfigError, clientConfigFromEnv, signalingFromEnv } from './config.ts';
import { createAppServer } from './http.ts';

const signalOnly = process.argv.includes('--signal-only');
const useHttps = process.argv.includes('--https') || /^(1|true|yes|on)$/i.test(process.env['TUTTI_HTTPS'] ?? '');
const port = Number(process.env['PORT'] ?? 8080);
const host = process.env['HOST'] ?? '0.0.0.0';
const certDir = process.env['TUTTI_CERT_DIR'] ?? fileURLToPath(new URL('../.tutti/cert', import.meta.url));

if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be an integer 0..65535, got ${process.env['PORT']}`);
  process.exit(2);
}

let clientConfig;
let signaling;
try {
  clientConfig = clientConfigFromEnv(process.env);
  signaling = signalingFromEnv(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(2);
}

let tls: { key: string; cert: string } | undefined;
if (useHttps) {
  const c = await loadOrCreateCert(certDir, defaultCertNames());
  tls = { key: c.key, cert: c.cert };
  console.log(`${c.created ? 'Generated' : 'Reusing'} self-signed certificate ${c.certPath}`);
  console.log(`  SHA-256 ${c.fingerprint256}, valid until ${c.validTo.toISOString().slice(0, 10)}`);
  console.log('  Browsers warn once per device: check the fingerprint, then accept it (or install cert.pem as trusted).');
}

const root = signalOnly ? null : fileURLToPath(new URL('../dist', import.meta.url));
const app = createAppServer({ root, signaling, clientConfig, ...(tls ? { tls } : {}) });
app.server.on('error', (err) => {
  console.error(`cannot listen on ${host}:${port}: ${err.message}`);
  process.exit(1);
});
app.server.listen(port, host, () => {
  const addr = app.server.address();
  const actual = typeof addr === 'object' && addr ? addr.port : port;
  const scheme = tls ? 'https' : 'http';
  const local = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  if (signalOnly) {
    console.log(`Tutti signaling on ${tls ? 'wss' : 'ws'}://${local}:${actual}`);
  } else {
    console.log(`Tutti running at ${scheme}://${local}:${actual}  (signaling on the same port)`);
  }
  if (host === '0.0.0.0' || host === '::') {
    for (const ip of lanIPv4()) console.log(`  on your network: ${scheme}://${ip}:${actual}`);
    if (!tls && !signalOnly) console.log('  (other devices need a secure context: start with --https for LAN lessons)');
  }
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => void app.close().then(() => process.exit(0)));
