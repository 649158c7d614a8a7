// The room view's speaker line (src/ui/output-dropouts.ts).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { StatsSample } from '../../src/engine/stats-recorder.ts';
import type { OutputDropouts, StatsMessage } from '../../src/shared/worker-protocol.ts';
import { outputNote } from '../../src/ui/output-dropouts.ts';

function sample(t: number, output: OutputDropouts | null): StatsSample {
  return { t, stats: { output } as StatsMessage };
}

describe('outputNote', () => {
  test('no figure from the browser: no line', () => {
    assert.equal(outputNote([sample(0, null), sample(1, null)]), null);
    assert.equal(outputNote([]), null);
  });

  test('counts the dropouts of the last 10 s, not those before', () => {
    const xs = Array.from({ length: 20 }, (_, i) => sample(i, { events: i < 5 ? i : 5, ms: i < 5 ? i * 2.5 : 12.5 }));
    assert.deepEqual(outputNote(xs), { text: 'Speaker: no dropouts in the last 10 s (5 in all)', warn: false });
    xs.push(sample(20, { events: 7, ms: 18 }));
    assert.deepEqual(outputNote(xs), { text: 'Speaker: 2 dropouts (5.5 ms) in the last 10 s (7 in all): this computer did not have the sound ready in time', warn: true });
  });

  test('one dropout; a new audio context starts again from zero', () => {
    assert.equal(outputNote([sample(0, { events: 0, ms: 0 }), sample(1, { events: 1, ms: 2.7 })])!.text, 'Speaker: 1 dropout (2.7 ms) in the last 10 s: this computer did not have the sound ready in time');
    assert.equal(outputNote([sample(0, { events: 9, ms: 30 }), sample(1, { events: 1, ms: 2 })])!.warn, true);
  });
});
