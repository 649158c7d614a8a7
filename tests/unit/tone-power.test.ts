// The tone check of the engine test (tests/support/wav.ts tonePower) must read a tone's level
// through what the fake capture device does to it under load: a few samples lost, which shifts the
// phase. One Goertzel sum over the whole second cancelled itself across such a shift.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tonePower } from '../support/wav.ts';

function sine(hz: number, n: number, amplitude = 0.4, phase = 0): number[] {
  return Array.from({ length: n }, (_, i) => amplitude * Math.sin((2 * Math.PI * hz * i) / 48_000 + phase));
}

describe('tonePower', () => {
  it('reads a 0.4-amplitude sine as 0.04 at its frequency and ~0 at another', () => {
    const x = sine(440, 48_000);
    assert.ok(Math.abs(tonePower(x, 440) - 0.04) < 0.001);
    assert.ok(tonePower(x, 1000) < 1e-6);
  });

  it('keeps the level across phase jumps (samples lost by the capture device)', () => {
    // Half a cycle lost in the middle: one sum over the second reads ~0 here.
    const x = [...sine(440, 24_000), ...sine(440, 24_000, 0.4, Math.PI + (2 * Math.PI * 440 * 24_000) / 48_000)];
    let whole = 0;
    {
      const k = 2 * Math.cos((2 * Math.PI * 440) / 48_000);
      let s1 = 0;
      let s2 = 0;
      for (const v of x) [s2, s1] = [s1, v + k * s1 - s2];
      whole = (s1 * s1 + s2 * s2 - k * s1 * s2) / (x.length * x.length);
    }
    assert.ok(whole < 0.001, `one sum over the jump cancels (${whole})`);
    assert.ok(Math.abs(tonePower(x, 440) - 0.04) < 0.002, `blockwise ${tonePower(x, 440)}`);
  });

  it('is not fooled by silence: a second of zeros has no tone', () => {
    assert.equal(tonePower(new Array(48_000).fill(0), 440), 0);
  });
});
