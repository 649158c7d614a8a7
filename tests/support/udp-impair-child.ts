// Entry of the relay process (udp-impair-process.ts): argv is the TURN server's port and the
// impairment options as JSON; it answers over the IPC channel Node's fork() opened.

import { UdpImpairRelay, type ImpairOptions } from './udp-impair.ts';
import type { FromRelay, ToRelay } from './udp-impair-process.ts';

const tell = (m: FromRelay): void => {
  process.send?.(m);
};

const serverPort = Number(process.argv[2]);
const opts = JSON.parse(process.argv[3] ?? '{}') as ImpairOptions;
try {
  const relay = await new UdpImpairRelay(serverPort, opts).start();
  process.on('message', (m: ToRelay) => {
    if (m.kind === 'set') relay.setImpairment(m.impairment);
    else if (m.kind === 'snapshot') tell({ kind: 'snapshot', id: m.id, counters: relay.snapshot() });
    else if (m.kind === 'close') void relay.close().then(() => process.exit(0));
  });
  // The test process gone (crashed, killed): do not outlive it.
  process.on('disconnect', () => void relay.close().then(() => process.exit(0)));
  tell({ kind: 'listening', port: relay.port });
} catch (e) {
  tell({ kind: 'error', message: String(e) });
  process.exit(1);
}
