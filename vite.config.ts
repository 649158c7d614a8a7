// Vite build and dev server. The dev server sends the same cross-origin-isolation headers as
// `npm start`, mounts the signaling hub at /signal and answers /config.json and /rooms, so `npm run dev` is a
// complete app too. The build also emits the web manifest and the service worker
// (vite-plugin-pwa, injectManifest: workers/sw/sw.ts with Workbox bundled, no CDN).
// `--mode test` makes the test build instead (dist-test/): the same app with the test switches and
// taps compiled in (__TUTTI_TEST__, src/shared/build-flags.d.ts). Every other mode is what users run.

import { defineConfig, type Plugin } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';
import { clientConfigFromEnv, signalingFromEnv } from './server/config.ts';
import { ISOLATION_HEADERS } from './server/http.ts';
import { SignalingHub } from './server/signaling.ts';

function devServer(): Plugin {
  return {
    name: 'tutti-dev-server',
    configureServer(server) {
      // Same settings as `npm start` (TUTTI_ALLOWED_ORIGINS, TUTTI_OPEN_ROOMS) and the same limits.
      const hub = new SignalingHub(signalingFromEnv(process.env));
      server.httpServer?.on('upgrade', (req, socket, head) => {
        if (req.url === '/signal') hub.handleUpgrade(req, socket, head);
      });
      server.httpServer?.on('close', () => hub.close());
      const config = JSON.stringify(clientConfigFromEnv(process.env));
      server.middlewares.use('/config.json', (_req, res) => {
        res.setHeader('Content-Type', 'application/json');
        res.end(config);
      });
      server.middlewares.use('/rooms', (_req, res) => {
        res.setHeader('Content-Type', 'application/json');
        res.setHeader('Cache-Control', 'no-store');
        res.end(JSON.stringify({ enabled: hub.openRoomsEnabled, rooms: hub.openRooms() }));
      });
    },
  };
}

const THEME_COLOR = '#1d2733';

/** `vite build --mode test`: the test build (npm run build:test). */
const TEST_MODE = 'test';

export default defineConfig(({ mode }) => ({
  define: { __TUTTI_TEST__: JSON.stringify(mode === TEST_MODE) },
  plugins: [
    devServer(),
    VitePWA({
      strategies: 'injectManifest',
      srcDir: 'workers/sw',
      filename: 'sw.ts',
      // src/pwa/service-worker.ts registers it (production builds only), with workbox-window.
      injectRegister: false,
      // The glob below already takes every icon; the plugin adds manifest.webmanifest itself.
      includeManifestIcons: false,
      devOptions: { enabled: false },
      injectManifest: {
        rollupFormat: 'iife',
        // The app shell: HTML, the page bundle, the network-worker and worklet bundles (emitted
        // by Vite from `new Worker(new URL(…))` and `?worker&url` imports as assets/*.js), icons.
        globPatterns: ['**/*.{html,js,css,svg,png}'],
        globIgnores: ['**/sw.js', '**/*.map'],
        maximumFileSizeToCacheInBytes: 4 * 1024 * 1024,
      },
      manifest: {
        id: '/',
        name: 'Tutti — play music together',
        short_name: 'Tutti',
        description: 'Play music together over the network with studio-quality, low-latency audio.',
        start_url: '/',
        scope: '/',
        display: 'standalone',
        background_color: '#10161d',
        theme_color: THEME_COLOR,
        categories: ['music', 'education'],
        icons: [
          { src: '/icon-192.png', sizes: '192x192', type: 'image/png', purpose: 'any' },
          { src: '/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'any' },
          { src: '/icon-maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
        ],
        shortcuts: [
          { name: 'New lesson room', short_name: 'New room', url: '/?action=new-room', icons: [{ src: '/icon-192.png', sizes: '192x192', type: 'image/png' }] },
          { name: 'Join a room', short_name: 'Join', url: '/?action=join', icons: [{ src: '/icon-192.png', sizes: '192x192', type: 'image/png' }] },
        ],
      },
    }),
  ],
  server: { headers: ISOLATION_HEADERS },
  preview: { headers: ISOLATION_HEADERS },
  worker: { format: 'es' },
  // Its own folder, so a test build can never be what `npm start` serves.
  build: { target: 'es2022', sourcemap: true, outDir: mode === TEST_MODE ? 'dist-test' : 'dist' },
}));
