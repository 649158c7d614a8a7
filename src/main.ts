// Page entry point (main thread): registers the UI and, in production builds, the service worker
// (offline shell, install, isolation headers on header-less hosts). No audio is processed here.
import './ui/tutti-app.ts';
import './ui/tutti-update-prompt.ts';
import { pwa } from './pwa/service-worker.ts';

// The dev server has no service worker (vite-plugin-pwa devOptions off): HMR stays predictable.
if (import.meta.env.PROD) void pwa.start(`${import.meta.env.BASE_URL}sw.js`);
