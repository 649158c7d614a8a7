// Vite build and dev server. The dev server sends the same cross-origin-isolation headers as
// `npm start` and mounts the signaling hub at /signal, so `npm run dev` is a complete app too.

import { defineConfig, type Plugin } from 'vite';
import { ISOLATION_HEADERS } from './server/http.ts';
import { SignalingHub } from './server/signaling.ts';

function devSignaling(): Plugin {
  return {
    name: 'tutti-dev-signaling',
    configureServer(server) {
      const hub = new SignalingHub();
      server.httpServer?.on('upgrade', (req, socket, head) => {
        if (req.url === '/signal') hub.handleUpgrade(req, socket, head);
      });
      server.httpServer?.on('close', () => hub.close());
    },
  };
}

export default defineConfig({
  plugins: [devSignaling()],
  server: { headers: ISOLATION_HEADERS },
  preview: { headers: ISOLATION_HEADERS },
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true },
});
