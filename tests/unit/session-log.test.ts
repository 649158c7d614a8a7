// The session log (src/room/session-log.ts): joins and leaves, light changes with their reasons,
// depth and mute changes, and who changed which setting or whose mix, from successive rosters.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LOG_CAPACITY, SessionLog } from '../../src/room/session-log.ts';
import type { MemberState, QualitySummary } from '../../src/shared/signaling-protocol.ts';

const member = (name: string, extra: Partial<MemberState> = {}): MemberState => ({ v: 1, name, role: 'student', instrument: '', muted: false, format: 'stereo', kind: 'participant', ...extra });
const heard = (pairs: Record<string, number>, depth = 6): QualitySummary => ({
  heard: Object.fromEntries(Object.entries(pairs).map(([id, glitchPercent]) => [id, { glitchPercent, rttMs: 4 }])),
  inputDb: -12,
  clipping: false,
  depth,
});

test('session log: who was here, who joined and left, light changes with reasons, depth and mute changes', () => {
  const log = new SessionLog(1);
  const alice = member('Alice', { role: 'teacher', instrument: 'piano' });
  log.roster(new Map([[1, alice], [2, member('Bob')]]), 1000);
  assert.deepEqual(log.entries.map((e) => e.text), ['you joined as Alice (teacher, piano)', 'Bob (student) was here']);

  // Both ends report: clean; then Bob hears Alice badly.
  const withQ = (a: number, b: number, depthB = 6, extraB: Partial<MemberState> = {}) =>
    new Map([
      [1, { ...alice, quality: heard({ '2': a }) }],
      [2, member('Bob', { quality: heard({ '1': b }, depthB), mix: { master: 1, depth: 8, adaptive: true, peers: {} }, ...extraB })],
    ]);
  log.roster(withQ(0, 0), 2000);
  assert.match(log.entries.at(-1)!.text, /^Alice ↔ Bob: measuring → clean \(Alice hears Bob: 0\.00 %.*Bob hears Alice: 0\.00 %/);
  log.roster(withQ(0, 25), 3000);
  assert.match(log.entries.at(-1)!.text, /^Alice ↔ Bob: clean → struggling .*Bob hears Alice: 25\.00 % glitches/);
  assert.equal(log.entries.at(-1)!.kind, 'light');
  const n = log.entries.length;
  log.roster(withQ(0, 30), 4000); // still red: nothing new
  assert.equal(log.entries.length, n);

  log.roster(withQ(0, 30, 11, { muted: true }), 5000);
  assert.deepEqual(log.entries.slice(n).map((e) => [e.kind, e.text]), [
    ['mute', 'Bob muted their microphone'],
    ['depth', "Bob's depth 11 quanta = 29.3 ms, automatic (was 6, automatic)"],
  ]);

  const carol = member('Carol');
  log.roster(new Map([...withQ(0, 30, 11, { muted: true }), [3, carol], [4, member('Carol', { kind: 'remote', controls: 3 })]]), 6000);
  assert.deepEqual(log.entries.slice(-2).map((e) => e.text), ['Carol (student) joined', "Carol's phone (remote control) joined"]);
  log.roster(withQ(0, 30, 11, { muted: true }), 7000);
  assert.deepEqual(log.entries.slice(-2).map((e) => e.text), ['Carol left', "Carol's phone left"]);
  assert.deepEqual(log.entries.slice(-2).map((e) => e.atMs), [7000, 7000]);
});

test('session log: settings and remote-control requests name the device that wrote them', () => {
  const log = new SessionLog(1);
  log.roster(new Map([[1, member('Alice')], [2, member('Bob')], [5, member('Bob', { kind: 'remote', controls: 2 })]]), 0);
  log.setting('redundancy', 0, 2, 10);
  log.setting('redundancy', 2, 1, 11);
  log.setting('depth', 9, undefined, 12);
  log.setting('listing', 'Bob\'s room', 2, 13);
  log.setting('listing', undefined, 2, 14);
  log.control(2, { seq: 1, from: 5, master: 0.5 }, 5, 20);
  log.control(1, { seq: 2, from: 5, peer: { id: '2', gain: 0, muted: true } }, 5, 21);
  log.control(2, { seq: 3, from: 5, record: true }, 5, 22);
  log.control(2, { seq: 4, from: 5 }, 5, 23); // nothing asked: nothing logged
  // A request whose payload claims another sender is logged under the device that wrote it.
  log.control(2, { seq: 5, from: 1, depth: 4 }, 99, 24);
  assert.deepEqual(log.entries.slice(3).map((e) => e.text), [
    'Bob set redundancy to off',
    'you set redundancy to 2 frames',
    "someone set the room's default depth to 9 quanta",
    'Bob set the room listed as "Bob\'s room"',
    'Bob set the room unlisted',
    "Bob (remote) set Bob's master volume to 50 %",
    'Bob (remote) set your volume of Bob to 0 %, muted',
    "Bob (remote) started a take on Bob's device",
    "device 99 set Bob's depth to 4 quanta",
  ]);
  // Someone who left is still named.
  log.roster(new Map([[1, member('Alice')]]), 30);
  log.setting('redundancy', 1, 2, 31);
  assert.equal(log.entries.at(-1)!.text, 'Bob set redundancy to 1 frame');
});

test('session log: the export is one line per entry with local time; capped, and says what it dropped', () => {
  const log = new SessionLog(1);
  log.roster(new Map([[1, member('Alice')]]), Date.UTC(2026, 10, 24, 9, 30, 0));
  const text = log.text('lesson-1', new Date(Date.UTC(2026, 10, 24, 10, 0, 0)));
  const lines = text.trim().split('\n');
  assert.match(lines[0]!, /^Tutti session log: room "lesson-1", exported 2026-11-24 \d\d:00:00\.000/);
  assert.match(lines[2]!, /^2026-11-24 \d\d:30:00\.000  join     you joined as Alice \(student\)$/);
  for (let i = 0; i < LOG_CAPACITY + 10; i++) log.setting('depth', i, 1, i);
  assert.equal(log.entries.length, LOG_CAPACITY);
  assert.equal(log.dropped, 11);
  assert.match(log.text('x'), /the 11 oldest entries were dropped/);
});

test('session log, lesson room: the teacher, who was let in, muted, removed, whose mix was set, the hand-over, and forgeries ignored', async () => {
  const { applyCommand, firstLesson } = await import('../../src/room/lesson-authority.ts');
  const log = new SessionLog(2);
  log.roster(new Map([[1, member('Tess', { role: 'teacher' })], [2, member('Sam')], [3, member('Mal')]]), 1000);
  const n = log.entries.length;
  let s = firstLesson('lesson-x', 1);
  log.lesson(null, s, 2000);
  let next = applyCommand(applyCommand(s, { kind: 'admit', id: 2 }), { kind: 'mute', id: 2, on: true });
  log.lesson(s, next, 3000);
  s = next;
  next = applyCommand(applyCommand(s, { kind: 'set-mix', id: 2, mix: { master: 0.5, depth: 6, adaptive: false, peers: { '1': { gain: 0.3, muted: false } } } }), { kind: 'mute', id: 2, on: false });
  log.lesson(s, next, 4000);
  s = next;
  next = applyCommand(s, { kind: 'hand-over', id: 2 });
  log.lesson(s, next, 5000);
  s = next;
  log.lesson(s, applyCommand(applyCommand(s, { kind: 'admit', id: 3 }), { kind: 'remove', id: 3 }), 6000);
  log.lessonIgnored('bad signature', 3, 7000);
  log.lessonIgnored('older', 3, 7000);
  log.lessonIgnored('not your remote', 3, 7000);
  assert.deepEqual(log.entries.slice(n).map((e) => e.text), [
    'lesson room: Tess is the teacher',
    'the teacher (Tess) let you in',
    'the teacher (Tess) muted you',
    'the teacher (Tess) unmuted you',
    'the teacher (Tess) set your mix: output 50 %, depth 6 quanta, Tess at 30 %',
    'you are the teacher now',
    'the teacher (you) removed Mal',
    'Mal wrote a lesson change not signed by the teacher (bad signature): ignored',
    'Mal put back an older lesson state (a replay): ignored',
    'Mal tried to change your mixer (only your own paired remote or the teacher may): ignored',
  ]);
  assert.ok(log.entries.slice(n).every((e) => e.kind === 'lesson'));
});
