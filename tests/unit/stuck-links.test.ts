// Room links y-webrtc would leave waiting forever (src/room/stuck-links.ts): which are restarted,
// when, and in which order on the two sides.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RETRY_GAP_MS, STUCK_AFTER_MS, StuckLinks, type RoomLinkLike } from '../../src/room/stuck-links.ts';

function link(o: { connected?: boolean; closed?: boolean; remote?: boolean; pc?: boolean } = {}): RoomLinkLike {
  const remoteDescription = o.remote ? ({ type: 'answer' } as RTCSessionDescription) : null;
  return { connected: o.connected ?? false, closed: o.closed ?? false, peer: { _pc: o.pc === false ? null : { remoteDescription } } };
}

test('a link with no remote description is restarted after STUCK_AFTER_MS on the larger id, RETRY_GAP_MS later on the smaller', () => {
  const big = new StuckLinks();
  const small = new StuckLinks();
  const l1 = link();
  const l2 = link();
  const onBig = new Map([['aaa', l1]]);
  const onSmall = new Map([['zzz', l2]]);
  let t = 0;
  const restartsAt: Record<string, number> = {};
  for (; t <= STUCK_AFTER_MS + RETRY_GAP_MS + 1000; t += 500) {
    if (!('big' in restartsAt) && big.check(onBig, 'zzz', t).length) restartsAt.big = t;
    if (!('small' in restartsAt) && small.check(onSmall, 'aaa', t).length) restartsAt.small = t;
  }
  assert.equal(restartsAt.big, STUCK_AFTER_MS);
  assert.equal(restartsAt.small, STUCK_AFTER_MS + RETRY_GAP_MS);
  assert.equal(big.restarted, 1);
});

test('connected, closed, answered or already destroyed links are left alone, and a link that recovers starts its clock again', () => {
  const w = new StuckLinks();
  const links = new Map<string, RoomLinkLike>([
    ['a', link({ connected: true })],
    ['b', link({ closed: true })],
    ['c', link({ remote: true })],
    ['d', link({ pc: false })],
  ]);
  for (let t = 0; t < 60_000; t += 500) assert.deepEqual(w.check(links, 'z', t), []);
  assert.equal(w.restarted, 0);
  // A link that gets its answer before the limit is never restarted, and if it loses it again
  // (not a state y-webrtc reaches, but the clock must not carry over) it gets a full period.
  const l = { connected: false, closed: false, peer: { _pc: { remoteDescription: null as RTCSessionDescription | null } } };
  const m = new Map([['a', l]]);
  assert.deepEqual(w.check(m, 'z', 0), []);
  l.peer._pc.remoteDescription = { type: 'answer' } as RTCSessionDescription;
  assert.deepEqual(w.check(m, 'z', STUCK_AFTER_MS - 100), []);
  l.peer._pc.remoteDescription = null;
  assert.deepEqual(w.check(m, 'z', STUCK_AFTER_MS + 100), []);
  assert.deepEqual(w.check(m, 'z', 2 * STUCK_AFTER_MS + 100), [l]);
});

test('a link is restarted once; a new link for the same peer gets its own period', () => {
  const w = new StuckLinks();
  const first = link();
  const m = new Map([['a', first]]);
  w.check(m, 'z', 0);
  assert.deepEqual(w.check(m, 'z', STUCK_AFTER_MS), [first]);
  const second = link();
  m.set('a', second);
  assert.deepEqual(w.check(m, 'z', STUCK_AFTER_MS + 500), []);
  assert.deepEqual(w.check(m, 'z', 2 * STUCK_AFTER_MS + 499), []);
  assert.deepEqual(w.check(m, 'z', 2 * STUCK_AFTER_MS + 500), [second]);
  assert.equal(w.restarted, 2);
});
