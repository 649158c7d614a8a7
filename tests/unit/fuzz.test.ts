// Property-based fuzzing of the receive path (see tests/support/fuzz.ts for the properties):
// ~20k seeded cases straight through the decoder and de-jitter writer, and the same through the
// real network worker's packet handler loaded in Node. Rerun a failing seed with
// TUTTI_SEED=<n> node --import tsx --test tests/unit/fuzz.test.ts

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { REJECT_NAMES, Reject } from '../../src/shared/wire.ts';
import { runFuzz, type FuzzReport } from '../support/fuzz.ts';
import { testSeeds } from './prng.ts';

function check(r: FuzzReport, wantReasons: readonly Reject[]): void {
  assert.deepEqual(r.failures, [], `${r.failureCount} failures, first ones:\n  ${r.failures.join('\n  ')}`);
  // The run really exercised every rejection reason and the writer (so the test can fail).
  for (const code of wantReasons) assert.ok((r.expected[REJECT_NAMES[code]] ?? 0) > 20, `seed ${r.seed}: too few ${REJECT_NAMES[code]} cases: ${JSON.stringify(r.expected)}`);
  assert.ok(r.fuzzPeer.received > 500 && r.fuzzPeer.late > 20 && r.fuzzPeer.duplicates > 5 && r.fuzzPeer.resyncs > 100 && r.fuzzPeer.stale > 20, `seed ${r.seed}: ${JSON.stringify(r.fuzzPeer)}`);
  assert.ok(r.canary.framesChecked > 1000, `seed ${r.seed}: canary checked ${r.canary.framesChecked} frames`);
}

const DECODER_REASONS = [Reject.OK, Reject.TOO_SHORT, Reject.BAD_MAGIC, Reject.BAD_VERSION, Reject.BAD_FLAGS, Reject.BAD_FORMAT, Reject.BAD_CHANNELS, Reject.BAD_FRAMES, Reject.BAD_LENGTH];

describe('receive-path fuzzing', () => {
  test('decoder + jitter writer + mixer, 20k cases per seed: right rejection reason per packet, canary bit-exact', async () => {
    for (const seed of testSeeds([1, 2])) {
      check(await runFuzz({ seed, cases: 20_000, mode: 'direct' }), DECODER_REASONS);
    }
  });

  test('the network worker receiver (workers/receiver.ts onPacket in Node), 20k cases: counted by reason as its stats count them, canary bit-exact', async () => {
    for (const seed of testSeeds([3])) {
      check(await runFuzz({ seed, cases: 20_000, mode: 'worker' }), [...DECODER_REASONS, Reject.NOT_BINARY]);
    }
  });
});
