// The bench baseline's de-jitter queue (bench/baseline/jitter-queue.ts): it must count late,
// missed and resyncs by Tutti's definitions, or the P3 comparison would compare different things.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JITTER_SLOTS, QUANTUM_FRAMES, QUANTUM_SAMPLES } from '../../src/shared/constants.ts';
import { MAX_PACKET_BYTES, encodePacket } from '../../src/shared/wire.ts';
import { JitterQueue } from '../../bench/baseline/jitter-queue.ts';

/** A packet whose every sample is seq/2^15 (mod 2^14, never 0), so the played value names the frame. */
function packet(seq: number): ArrayBuffer {
  const out = new Uint8Array(MAX_PACKET_BYTES);
  const src = new Float32Array(QUANTUM_SAMPLES).fill((1 + (seq % 16383)) / 32768);
  const len = encodePacket(out, new DataView(out.buffer), src, 2, 7, seq >>> 0, 0);
  return out.slice(0, len).buffer;
}
const played = (l: Float32Array) => (l[0] === 0 ? null : Math.round(l[0]! * 32768) - 1);

function render(q: JitterQueue): number | null {
  const l = new Float32Array(QUANTUM_FRAMES);
  const r = new Float32Array(QUANTUM_FRAMES);
  q.render(l, r);
  return played(l);
}

test('plays each frame depth quanta after the first arrived, in order', () => {
  const q = new JitterQueue(3);
  const out: (number | null)[] = [];
  for (let s = 100; s < 110; s++) {
    q.push(packet(s));
    out.push(render(q));
  }
  assert.deepEqual(out, [null, null, null, 100, 101, 102, 103, 104, 105, 106]);
  assert.deepEqual({ ...q.counters }, { received: 10, late: 0, duplicates: 0, rejected: 0, resyncs: 0, played: 7, missed: 0 });
});

test('a frame arriving after its playout slot is late, and its slot was missed', () => {
  const q = new JitterQueue(2);
  q.push(packet(0));
  for (let i = 0; i < 4; i++) render(q); // cursor -2..1: plays 0, misses 1 (not yet here)
  q.push(packet(1)); // its slot passed
  assert.equal(q.counters.late, 1);
  assert.equal(q.counters.missed, 1);
  assert.equal(q.counters.played, 1);
  q.push(packet(2));
  assert.equal(render(q), 2);
});

test('a run of JITTER_SLOTS late frames restarts the timeline (counted as a resync, not late)', () => {
  const q = new JitterQueue(1);
  q.push(packet(0));
  for (let i = 0; i < 200; i++) render(q);
  for (let s = 1; s <= JITTER_SLOTS; s++) q.push(packet(s));
  assert.equal(q.counters.late, JITTER_SLOTS - 1);
  assert.equal(q.counters.resyncs, 1);
  assert.equal(render(q), null);
  assert.equal(render(q), JITTER_SLOTS);
});

test('duplicates and malformed packets are counted, not played twice', () => {
  const q = new JitterQueue(1);
  q.push(packet(5));
  q.push(packet(6));
  q.push(packet(6));
  q.push(new Uint8Array([1, 2, 3]).buffer);
  assert.equal(q.counters.duplicates, 1);
  assert.equal(q.counters.rejected, 1);
  assert.deepEqual([render(q), render(q), render(q)], [null, 5, 6]);
});
