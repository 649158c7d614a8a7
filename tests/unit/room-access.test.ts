// What a member is told about the room and its password (src/room/access.ts), driven by the
// relays Room sees on its signaling topic: a silent subscriber never makes a lone member see
// "wrong password"; a newcomer with another password is told by the members' answers; answers
// are rate-limited and never answered. PROTOCOL.md §3.6.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ANSWER_INTERVAL_MS, AccessTracker, WRONG_PASSWORD_AFTER_MS, type Access } from '../../src/room/access.ts';

const SETTLED = WRONG_PASSWORD_AFTER_MS;
const own = (clients: number) => ({ clients, readable: true, answer: false });
const foreign = (clients: number, answer = false) => ({ clients, readable: false, answer });

/** Access over time with no peer connected: [ms since joining, access]. */
function timeline(t: AccessTracker, at: number[]): [number, Access][] {
  return at.map((ms) => [ms, t.update(0, ms)]);
}

describe('room access', () => {
  test('a silent subscriber never makes a lone member see wrong-password; it shows as waiting', () => {
    const t = new AccessTracker(0);
    // Our own announce comes back: the stranger is counted, and says nothing, ever.
    assert.equal(t.relay(own(2), 100), false, 'nothing to answer');
    assert.deepEqual(timeline(t, [200, SETTLED - 1, SETTLED, 60_000, 3_600_000]), [
      [200, 'connecting'],
      [SETTLED - 1, 'connecting'],
      [SETTLED, 'waiting'],
      [60_000, 'waiting'],
      [3_600_000, 'waiting'],
    ]);
    assert.equal(t.topicClients, 2);
    // Members of our own room that join later read fine and connect.
    t.relay(own(3), 70_000);
    assert.equal(t.update(1, 70_001), 'connected');
  });

  test('a newcomer with another password learns it from the members\' answers', () => {
    const n = new AccessTracker(0);
    n.relay(own(3), 50); // our announce: two were here before us
    // Each member answers our unreadable announce; answers are never answered back.
    assert.equal(n.relay(foreign(3, true), 80), false);
    assert.equal(n.relay(foreign(3, true), 90), false);
    assert.equal(n.update(0, 100), 'connecting', 'not judged before it settles');
    assert.equal(n.update(0, SETTLED), 'wrong-password');
    assert.equal(n.foreign, 2);
  });

  test('a member alone, then a newcomer with another password: intruder, and the member answers once', () => {
    const m = new AccessTracker(0);
    m.relay(own(1), 50);
    assert.equal(m.update(0, 60), 'alone');
    assert.equal(m.update(0, SETTLED + 1000), 'alone');
    // The newcomer's announce, unreadable: answer it (once per ANSWER_INTERVAL_MS).
    assert.equal(m.relay(foreign(2), 10_000), true);
    assert.equal(m.relay(foreign(2), 10_000 + ANSWER_INTERVAL_MS - 1), false, 'rate-limited');
    assert.equal(m.relay(foreign(2), 10_000 + ANSWER_INTERVAL_MS), true);
    assert.equal(m.relay(foreign(2, true), 20_000), false, 'an answer is not answered');
    assert.equal(m.update(0, 20_001), 'intruder');
  });

  test('a member waiting beside a silent socket, then a newcomer with another password: intruder, not wrong-password', () => {
    const m = new AccessTracker(0);
    m.relay(own(2), 50);
    assert.equal(m.update(0, SETTLED), 'waiting');
    assert.equal(m.relay(foreign(3), SETTLED + 500), true, 'the newcomer arrived after us');
    assert.equal(m.update(0, SETTLED + 501), 'intruder');
  });

  test('after a peer has connected, a stale count is no evidence; only new unreadable payloads are', () => {
    const m = new AccessTracker(0);
    m.relay(own(2), 50);
    assert.equal(m.update(1, 1000), 'connected');
    // The peer leaves; the last count (2) is stale until the next relay.
    assert.equal(m.update(0, SETTLED + 10), 'alone');
    // Alone again, so whoever now speaks another key came after us.
    m.relay(foreign(2), SETTLED + 20);
    assert.equal(m.update(0, SETTLED + 30), 'intruder');
  });

  test('no relay at all (signaling unreachable): alone once settled', () => {
    const t = new AccessTracker(0);
    assert.equal(t.update(0, 10), 'connecting');
    assert.equal(t.update(0, SETTLED), 'alone');
    t.relay({ clients: null, readable: true, answer: false }, SETTLED + 1);
    assert.equal(t.topicClients, 0, 'a relay without a count changes nothing');
  });
});
