// Test switches read from the page URL (`?test=tap&dropEvery=10&delayMs=30&jitterMs=10&captureRatio=1.001&wire=1&clockOffsetMs=40&clockPpm=300&playOnBeat=1&onsets=1`),
// passed to the network worker at start. Only the browser tests set them; the UI never does.
// Called only behind `__TUTTI_TEST__`, so it exists in the test build (dist-test/) alone.

import type { TestOptions } from '../shared/worker-protocol.ts';

export function testOptionsFromUrl(params: URLSearchParams): TestOptions | null {
  const t: TestOptions = {};
  if (params.get('test') === 'tap') t.tap = true;
  const num = (k: string, ok: (x: number) => boolean): number | undefined => {
    const v = params.get(k);
    if (v === null) return undefined;
    const x = Number(v);
    return Number.isFinite(x) && ok(x) ? x : undefined;
  };
  const dropEvery = num('dropEvery', (x) => Number.isInteger(x) && x >= 2);
  const delayMs = num('delayMs', (x) => x > 0 && x <= 1000);
  const jitterMs = num('jitterMs', (x) => x > 0 && x <= 1000);
  const captureRatio = num('captureRatio', (x) => x > 0.9 && x < 1.1);
  if (dropEvery !== undefined) t.dropEvery = dropEvery;
  if (delayMs !== undefined) t.delayMs = delayMs;
  if (jitterMs !== undefined) t.jitterMs = jitterMs;
  if (captureRatio !== undefined) t.captureRatio = captureRatio;
  if (params.get('wire') === '1') t.wireV1 = true;
  if (params.get('playOnBeat') === '1') t.playOnBeat = true;
  if (params.get('onsets') === '1') t.onsetTap = true;
  const clockOffsetMs = num('clockOffsetMs', (x) => Math.abs(x) <= 3_600_000);
  const clockPpm = num('clockPpm', (x) => Math.abs(x) <= 10_000);
  if (clockOffsetMs !== undefined) t.clockOffsetMs = clockOffsetMs;
  if (clockPpm !== undefined) t.clockPpm = clockPpm;
  return Object.keys(t).length ? t : null;
}
