// The depth sweep's verdict on a sustained tone (bench/m2e/tone-verdict.ts): what makes a depth
// clean, and clean as far as the playout goes when the receiver's output device dropped out.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { toneVerdict, type ToneCounts } from '../../bench/m2e/tone-verdict.ts';

const quiet: ToneCounts = { seconds: 59.8, dips: 0, jumps: 0, underruns: 0, trimmed: 0, late: 0, lost: 0, speakerDropouts: 0, outputStalls: 0, outputStalledMs: 0 };

describe('tone verdict', () => {
  test('nothing heard, nothing counted: clean both ways', () => {
    assert.deepEqual(toneVerdict(quiet), { clean: true, playoutClean: true });
    assert.deepEqual(toneVerdict({ ...quiet, speakerDropouts: null }), { clean: true, playoutClean: true });
  });

  test('no tone in the recording is never clean', () => {
    assert.deepEqual(toneVerdict({ ...quiet, seconds: 0 }), { clean: false, playoutClean: false });
  });

  test('every glitch the app counts makes the playout unclean, whatever the speaker did', () => {
    for (const k of ['underruns', 'trimmed', 'late', 'lost'] as const) {
      assert.deepEqual(toneVerdict({ ...quiet, [k]: 1, dips: 1, speakerDropouts: 5 }), { clean: false, playoutClean: false }, k);
      assert.deepEqual(toneVerdict({ ...quiet, [k]: 1 }), { clean: false, playoutClean: false }, `${k}, nothing heard`);
    }
  });

  test('dips and jumps within the speaker dropouts: the playout was clean, the tone was not', () => {
    // The sweep at 647f095, depth 11: 6 dips, 9 speaker dropouts, nothing counted.
    assert.deepEqual(toneVerdict({ ...quiet, dips: 6, speakerDropouts: 9 }), { clean: false, playoutClean: true });
    assert.deepEqual(toneVerdict({ ...quiet, dips: 1, jumps: 1, speakerDropouts: 2 }), { clean: false, playoutClean: true });
    // A dropout heard as nothing still makes the tone unclean (the listener's device glitched).
    assert.deepEqual(toneVerdict({ ...quiet, speakerDropouts: 3 }), { clean: false, playoutClean: true });
  });

  test('more glitches heard than the speaker dropped out: not clean either way', () => {
    assert.deepEqual(toneVerdict({ ...quiet, dips: 3, jumps: 1, speakerDropouts: 3 }), { clean: false, playoutClean: false });
    assert.deepEqual(toneVerdict({ ...quiet, dips: 1, speakerDropouts: 0 }), { clean: false, playoutClean: false });
    // A browser that does not tell: a dip is nobody's but ours.
    assert.deepEqual(toneVerdict({ ...quiet, jumps: 1, speakerDropouts: null }), { clean: false, playoutClean: false });
  });

  test("a trim of our output's stall backlog is the stall's; more than it, or an underrun beside it, is the playout's", () => {
    // The m2e at 74c7832: a 60 s tone at manual 11 held 1 jump and 4 trimmed quanta; the windows'
    // trims each came beside a stall of 13-23 ms (5-8 quanta).
    const stall = { ...quiet, outputStalls: 1, outputStalledMs: 13 };
    assert.deepEqual(toneVerdict({ ...stall, trimmed: 4, jumps: 1 }), { clean: false, playoutClean: true });
    assert.deepEqual(toneVerdict({ ...stall, trimmed: 6, dips: 1, jumps: 1 }), { clean: false, playoutClean: true }, 'up to its quanta and one more');
    assert.deepEqual(toneVerdict({ ...stall, trimmed: 7 }), { clean: false, playoutClean: false }, 'more than the stall left');
    assert.deepEqual(toneVerdict({ ...stall, underruns: 1 }), { clean: false, playoutClean: false }, 'an underrun is never the stall\'s');
    assert.deepEqual(toneVerdict({ ...stall, dips: 2, jumps: 1 }), { clean: false, playoutClean: false }, 'more heard than a gap and a skip');
    // A stall heard as nothing is still a stall: not clean.
    assert.deepEqual(toneVerdict(stall), { clean: false, playoutClean: true });
    // Without a stall no trim is the stall's.
    assert.deepEqual(toneVerdict({ ...quiet, trimmed: 1, outputStalledMs: 13 }), { clean: false, playoutClean: false });
  });
});
