// Builds the bench pages (not part of the app) into bench/out: wake/, baseline/, synth/, m2e/.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const page = (name: string) => fileURLToPath(new URL(`./${name}/index.html`, import.meta.url));

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  worker: { format: 'es' },
  build: {
    outDir: fileURLToPath(new URL('./out', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    rollupOptions: { input: { wake: page('wake'), baseline: page('baseline'), synth: page('synth'), m2e: page('m2e'), probe: fileURLToPath(new URL('./m2e/probe.html', import.meta.url)) } },
  },
  logLevel: 'warn',
});
