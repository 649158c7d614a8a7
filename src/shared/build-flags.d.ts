// Compile-time flags of the builds, replaced by Vite's `define` (vite.config.ts). A global script
// declaration (no import/export) so every thread's code can branch on them without importing.

/**
 * True only in the test build (`npm run build:test`, `vite build --mode test` → dist-test/), which
 * the browser tests load where they need taps or test switches. False in every build users run
 * (`npm start`, `npm run build` → dist/, `npm run dev`): branches on it are constant-folded and the
 * code behind them (URL test switches, Tap, TestClockSkew, the worker's debug globals) is not in
 * the bundle at all. Test it directly (`if (__TUTTI_TEST__ && …)`), never through a variable, so the
 * minifier sees a literal. Node harnesses that load build code as source (tests/support/fuzz.ts)
 * set `globalThis.__TUTTI_TEST__` themselves.
 */
declare const __TUTTI_TEST__: boolean;
