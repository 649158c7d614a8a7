// Service worker (its own thread): precaches the app shell, including the network-worker and
// worklet bundles, so Tutti starts offline; serves every same-origin response with COOP/COEP/CORP
// so the page is cross-origin isolated even on a static host that sends no headers; waits for the
// page's SKIP_WAITING before a new version takes over (the page shows <tutti-update-prompt>).
// Built by vite-plugin-pwa (injectManifest): Workbox is bundled, `self.__WB_MANIFEST` is the list.

import { clientsClaim, setCacheNameDetails, type WorkboxPlugin } from 'workbox-core';
import { addPlugins, createHandlerBoundToURL, precacheAndRoute, type PrecacheEntry } from 'workbox-precaching';
import { NavigationRoute, registerRoute } from 'workbox-routing';
import { NetworkFirst, NetworkOnly } from 'workbox-strategies';
import { isToServiceWorker, type VersionReply } from '../../src/shared/sw-protocol.ts';
import { withIsolationHeaders } from './isolation.ts';
import { CACHE_PREFIX, manifestVersion, outdatedCaches } from './version.ts';

declare const self: ServiceWorkerGlobalScope & { __WB_MANIFEST: Array<PrecacheEntry | string> };

const manifest = self.__WB_MANIFEST;
const VERSION = manifestVersion(manifest);

// Versioned cache names; must be set before the precache controller is created below.
setCacheNameDetails({ prefix: CACHE_PREFIX, precache: 'precache', runtime: 'runtime', suffix: VERSION });
const RUNTIME_CACHE = `${CACHE_PREFIX}-runtime-${VERSION}`;

/** Adds the isolation headers to whatever Workbox serves, from the network or from a cache. */
const isolate: WorkboxPlugin = {
  fetchDidSucceed: async ({ response }) => withIsolationHeaders(response),
  cachedResponseWillBeUsed: async ({ cachedResponse }) => (cachedResponse ? withIsolationHeaders(cachedResponse) : cachedResponse),
};

addPlugins([isolate]);
precacheAndRoute(manifest);

// Navigations (/, /?room=…, client-side routes) get the precached shell; server endpoints do not.
registerRoute(new NavigationRoute(createHandlerBoundToURL('index.html'), { denylist: [/^\/healthz/, /^\/config\.json/, /^\/rooms(\?|$)/, /^\/signal/] }));

// Server-provided settings (ICE servers): fresh when online, last known copy offline.
registerRoute(
  ({ url, sameOrigin }) => sameOrigin && url.pathname === '/config.json',
  new NetworkFirst({ cacheName: RUNTIME_CACHE, networkTimeoutSeconds: 3, plugins: [isolate] }),
);

// Every other same-origin GET goes to the network, isolated too. Cross-origin requests are not
// intercepted at all.
registerRoute(({ sameOrigin }) => sameOrigin, new NetworkOnly({ plugins: [isolate] }));

// The first version controls the page that registered it at once (so it is installable and works
// offline without a reload); later versions wait for the page's SKIP_WAITING.
clientsClaim();

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys().then((names) => Promise.all(outdatedCaches(names, VERSION).map((name) => caches.delete(name)))),
  );
});

self.addEventListener('message', (event) => {
  const msg: unknown = event.data;
  if (!isToServiceWorker(msg)) return;
  if (msg.type === 'SKIP_WAITING') {
    void self.skipWaiting();
  } else {
    const reply: VersionReply = { type: 'VERSION', version: VERSION, precached: manifest.map((e) => (typeof e === 'string' ? e : e.url)) };
    event.ports[0]?.postMessage(reply);
  }
});
