// The test build's skewed sender (workers/test-clock-skew.ts): its stamps must be what a card that
// runs `ratio` fast would give, smooth, so that the drift shown sees drift and not steps.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QUANTUM_MS, QUANTUM_SAMPLES } from '../../src/shared/constants.ts';
import { TestClockSkew } from '../../workers/test-clock-skew.ts';

describe('TestClockSkew stamps', () => {
  for (const ratio of [1.001, 0.999, 1.01]) {
    it(`ratio ${ratio}: one output quantum every ${QUANTUM_MS.toFixed(3)} ms / ratio of capture time, no steps`, () => {
      const r = new TestClockSkew(ratio);
      const q = new Float32Array(QUANTUM_SAMPLES);
      const out = new Float32Array(QUANTUM_SAMPLES);
      const stamps: number[] = [];
      const t0 = 1_000_000;
      for (let n = 0; n < 4000; n++) {
        r.push(q, t0 + n * QUANTUM_MS * 1000);
        for (let s = r.pull(out); s !== null; s = r.pull(out)) stamps.push(s);
      }
      const steps = stamps.slice(1).map((s, i) => s - stamps[i]!);
      const want = (QUANTUM_MS * 1000) / ratio;
      // Rounded to the µs: each step within 1 µs of the card's quantum.
      assert.ok(steps.every((d) => Math.abs(d - want) <= 1), `steps ${Math.min(...steps)}–${Math.max(...steps)} µs, want ${want.toFixed(2)}`);
      // Quanta out per quanta in: the ratio.
      assert.ok(Math.abs(stamps.length / 4000 - ratio) < 0.002, `${stamps.length} quanta out of 4000`);
    });
  }
});
