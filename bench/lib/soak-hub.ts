// The soak's hub (a child process of bench/scenarios/soak.ts): the real app server with signaling
// only and the default limits, on a free loopback port. In a process of its own so that its RSS is
// its own and a crash shows as this process exiting. Tells the parent its port over IPC; exits
// when the parent goes.

import { createAppServer } from '../../server/http.ts';

const app = createAppServer({ root: null });
app.server.listen(0, '127.0.0.1', () => {
  const addr = app.server.address();
  if (typeof addr !== 'object' || !addr) throw new Error('soak hub has no address');
  process.send?.({ type: 'ready', port: addr.port });
});
process.on('disconnect', () => void app.close().then(() => process.exit(0)));
