// Browser suite: each test launches its own Chromium processes (one per peer) against the real
// app server it starts itself. One worker: every peer needs a real-time audio thread and the
// machines have two cores.
import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: 'tests/e2e',
  workers: 1,
  fullyParallel: false,
  timeout: 180_000,
  retries: 0,
  // The steal reporter prints the CPU the host took during each failed test (docs/TESTING.md).
  reporter: process.env['CI']
    ? [['list'], ['./tests/support/steal-reporter.ts'], ['json', { outputFile: 'test-results/browser.json' }]]
    : [['list'], ['./tests/support/steal-reporter.ts']],
});
