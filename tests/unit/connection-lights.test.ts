// Everyone's connection at a glance: the summary a participant publishes (src/room/quality-summary.ts)
// and the lights every member's view draws from the room's summaries (src/ui/connection-lights.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { advanceMoved, lightKey, peakDb, qualitySummary } from '../../src/room/quality-summary.ts';
import type { MemberState, QualitySummary } from '../../src/shared/signaling-protocol.ts';
import { parseMemberState } from '../../src/shared/signaling-protocol.ts';
import type { PeerStats } from '../../src/shared/worker-protocol.ts';
import { memberNotes, pairLights } from '../../src/ui/connection-lights.ts';

/** A peer's stats at second `t`: 375 frames a second, `lostPerSecond` of them lost, a round trip of 4 ms. */
function stats(t: number, lostPerSecond: number): PeerStats {
  return { peerId: 'x', received: 375 * t - lostPerSecond * t, recovered: 0, late: 0, lost: lostPerSecond * t, underruns: 0, trimmed: 0, rttMs: 4, fill: { avg: 6, min: 5, held: 6, target: 6, relief: 0 } } as unknown as PeerStats;
}

const member = (name: string, quality?: QualitySummary): MemberState => ({ v: 1, name, role: 'student', instrument: '', muted: false, format: 'stereo', kind: 'participant', ...(quality ? { quality } : {}) });

test('quality summary: glitch % over the last 10 s per peer, round trip, input peak in dBFS, clipping and depth', () => {
  const history = new Map([
    ['7', Array.from({ length: 30 }, (_, t) => stats(t + 1, 0))],
    ['9', Array.from({ length: 30 }, (_, t) => stats(t + 1, 15))],
  ]);
  const s = qualitySummary(history, 0.5, true, 6);
  assert.deepEqual(s.heard['7'], { glitchPercent: 0, rttMs: 4 });
  assert.equal(s.heard['9']!.glitchPercent, 4); // 15 of 375 a second
  assert.deepEqual([s.inputDb, s.clipping, s.depth], [-6, true, 6]);
  // Republished at once only when a light would change: the same classes, the same key.
  assert.equal(lightKey(s), lightKey({ ...s, inputDb: -20, heard: { ...s.heard, '7': { glitchPercent: 0.3, rttMs: 9 } } }));
  assert.notEqual(lightKey(s), lightKey({ ...s, heard: { ...s.heard, '7': { glitchPercent: 0.6, rttMs: 4 } } }));
  assert.notEqual(lightKey(s), lightKey({ ...s, clipping: false }));
  assert.equal(peakDb(0), -99);
  assert.equal(peakDb(1), 0);
  // It survives the room's parser (awareness is untrusted); a malformed one is dropped, not the member.
  const parsed = parseMemberState({ ...member('A'), quality: s })!;
  assert.deepEqual(parsed.quality, s);
  assert.equal(parseMemberState({ ...member('A'), quality: { heard: {}, inputDb: 'loud', clipping: false, depth: 6 } })!.quality, undefined);
});

test('lights: each pair is the worse of its two directions; the same from the summaries alone; missing ends say so', () => {
  const q = (heard: QualitySummary['heard'], clipping = false): QualitySummary => ({ heard, inputDb: -12, clipping, depth: 5 });
  const roster = new Map<number, MemberState>([
    [1, member('Alice', q({ '2': { glitchPercent: 0.1, rttMs: 3 }, '3': { glitchPercent: 4, rttMs: 3 } }))],
    [2, member('Bob', q({ '1': { glitchPercent: 0.6, rttMs: 3 }, '3': { glitchPercent: 1, rttMs: 3 } }, true))],
    [3, member('Carol', q({ '1': { glitchPercent: 0, rttMs: 3 } }))],
    [4, member('Dan')],
    [5, { ...member("Alice's phone"), kind: 'remote', controls: 1 }],
  ]);
  const pairs = pairLights(roster);
  const light = (a: string, b: string) => pairs.find((p) => p.names.join('–') === `${a}–${b}`)!;
  assert.equal(pairs.length, 6, 'four participants: six pairs (the remote is not one)');
  assert.equal(light('Alice', 'Bob').light, 'amber', 'Bob hears Alice at 0.6 %');
  assert.equal(light('Alice', 'Carol').light, 'red', 'Alice hears Carol at 4 %');
  assert.equal(light('Bob', 'Carol').light, 'amber', 'Bob hears Carol at 1 %; Carol has not reported Bob');
  assert.match(light('Bob', 'Carol').reasons.join('\n'), /Carol has not reported hearing Bob yet/);
  assert.equal(light('Alice', 'Dan').light, 'unknown');
  assert.match(light('Alice', 'Carol').reasons[0]!, /Alice hears Carol: 4\.00 % glitches/);
  const notes = memberNotes(roster);
  assert.equal(notes.find((n) => n.name === 'Bob')!.clipping, true);
  assert.match(notes.find((n) => n.name === 'Bob')!.text!, /^input clipping · input peak -12\.0 dBFS · depth 5/);
  assert.equal(notes.find((n) => n.name === 'Dan')!.text, null);
});

test("quality summary: the one-way delay is the newest second's, and a move of 0.5 ms or more is a reason to republish (leader mode)", () => {
  const oneWay = (t: number, ms: number | null): PeerStats => ({ ...stats(t, 0), oneWayMs: ms === null ? null : { p50: ms, p99: ms + 2 } }) as PeerStats;
  // A stall moved the playout 13 ms later in the last second: the summary says so at once (a
  // median over the window would still say 55).
  const history = new Map([['7', [...Array.from({ length: 9 }, (_, t) => oneWay(t + 1, 55)), oneWay(10, 68.04)]], ['9', [oneWay(1, 40), oneWay(2, null)]]]);
  const s = qualitySummary(history, 0.1, false, 8);
  assert.equal(s.heard['7']!.oneWayMs, 68);
  assert.equal(s.heard['9']!.oneWayMs, 40, 'a second without a figure keeps the last one');
  const was = { ...s, heard: { ...s.heard, '7': { ...s.heard['7']!, oneWayMs: 67.6 } } };
  assert.equal(advanceMoved(s, was), false, '0.4 ms: not yet');
  assert.equal(advanceMoved(s, { ...s, heard: { ...s.heard, '7': { ...s.heard['7']!, oneWayMs: 67.5 } } }), true);
  assert.equal(advanceMoved(s, { ...s, heard: { '9': s.heard['9']! } }), true, 'a peer newly measured');
});
