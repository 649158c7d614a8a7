// Builds the bench pages (not part of the app) into bench/out.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('./wake', import.meta.url)),
  base: './',
  worker: { format: 'es' },
  build: { outDir: fileURLToPath(new URL('./out/wake', import.meta.url)), emptyOutDir: true, target: 'es2022' },
  logLevel: 'warn',
});
