// `npm start` / `npm run signal`: one port for the app and its signaling server.
// PORT (default 8080), HOST (default 0.0.0.0), TUTTI_ALLOWED_ORIGINS (comma-separated).

import { fileURLToPath } from 'node:url';
import { createAppServer } from './http.ts';

const signalOnly = process.argv.includes('--signal-only');
const port = Number(process.env['PORT'] ?? 8080);
const host = process.env['HOST'] ?? '0.0.0.0';
const allowedOrigins = (process.env['TUTTI_ALLOWED_ORIGINS'] ?? '').split(',').map((s) => s.trim()).filter(Boolean);

if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be an integer 0..65535, got ${process.env['PORT']}`);
  process.exit(2);
}

const root = signalOnly ? null : fileURLToPath(new URL('../dist', import.meta.url));
const app = createAppServer({ root, signaling: { allowedOrigins } });
app.server.on('error', (err) => {
  console.error(`cannot listen on ${host}:${port}: ${err.message}`);
  process.exit(1);
});
app.server.listen(port, host, () => {
  const addr = app.server.address();
  const actual = typeof addr === 'object' && addr ? addr.port : port;
  console.log(signalOnly ? `Tutti signaling on ws://localhost:${actual}` : `Tutti running at http://localhost:${actual}  (signaling on the same port)`);
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => void app.close().then(() => process.exit(0)));
