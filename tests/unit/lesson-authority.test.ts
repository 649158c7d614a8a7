// The lesson room's teacher authority (src/room/lesson-authority.ts) with Node's WebCrypto: the
// room's name fixes the teacher's key; a state verifies only when signed along the hand-over chain
// from that key; forged, replayed and forked states are told apart from newer ones.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  applyCommand, compareLesson, firstLesson, handOver, inLesson, isLessonRoom, lessonRoomName, newLessonKey, signLesson, standingOf, teacherKeyOf, verifyLesson,
  type VerifiedLesson,
} from '../../src/room/lesson-authority.ts';

async function ok(room: string, s: unknown): Promise<VerifiedLesson> {
  const v = await verifyLesson(room, s);
  assert.ok(!('rejected' in v), `rejected: ${'rejected' in v ? v.rejected : ''}`);
  return v;
}
async function why(room: string, s: unknown): Promise<string> {
  const v = await verifyLesson(room, s);
  return 'rejected' in v ? v.rejected : 'accepted';
}

test('a lesson room is named after its teacher key: lesson- and 26 base32 characters; different keys, different names', async () => {
  const a = await newLessonKey();
  const b = await newLessonKey();
  const na = await lessonRoomName(a.pub);
  assert.match(na, /^lesson-[a-z2-7]{5}(-[a-z2-7]{5}){4}-[a-z2-7]$/);
  assert.ok(isLessonRoom(na));
  assert.equal(await lessonRoomName(a.pub), na, 'the same key, the same name');
  assert.notEqual(await lessonRoomName(b.pub), na);
  assert.equal(isLessonRoom('abcde-fghij-klmno-pqrst-uvwxy-z'), false, 'an ordinary room name');
  assert.equal(isLessonRoom('lesson-ABCDE-fghij-klmno-pqrst-uvwxy-z'), false);
});

test('the teacher signs, every device verifies; a member without the key cannot admit, mute, set a mix or remove', async () => {
  const teacher = await newLessonKey();
  const room = await lessonRoomName(teacher.pub);
  const s0 = await signLesson(teacher, firstLesson(room, 11), null);
  const v0 = await ok(room, s0);
  assert.equal(v0.state.teacher, 11);
  assert.equal(standingOf(v0.state, 22), 'waiting');
  assert.equal(inLesson(v0.state, 11), true);
  assert.equal(inLesson(v0.state, 22), false);

  const s1 = await signLesson(teacher, applyCommand(v0.state, { kind: 'admit', id: 22 }), s0);
  const v1 = await ok(room, s1);
  assert.equal(compareLesson(v0, v1), 'newer');
  assert.equal(standingOf(v1.state, 22), 'admitted');

  // Mallory knows the password, not the key.
  const mallory = await newLessonKey();
  const state = applyCommand(v1.state, { kind: 'admit', id: 33 });
  // 1. She edits the body and keeps the teacher's signature.
  assert.equal(await why(room, { ...s1, body: JSON.stringify(state) }), 'bad signature');
  // 2. She signs it herself on the teacher's chain.
  assert.equal(await why(room, await signLesson(mallory, state, s1)), 'bad signature');
  // 3. She starts a chain of her own (her key as the anchor): not this room's key.
  assert.equal(await why(room, await signLesson(mallory, state, null)), 'not the room key');
  // 4. She hands the role to herself with her own signature.
  const fake = await handOver(mallory, { ...state, teacher: 33 }, s1, mallory.pub);
  assert.equal(await why(room, fake), 'bad hand-over');
  assert.equal(await why(room, await signLesson(mallory, { ...state, n: state.n + 1 }, fake)), 'bad hand-over');
  // 5. Each command kind, forged: mute, set a mix, remove.
  for (const c of [{ kind: 'mute', id: 22, on: true }, { kind: 'set-mix', id: 22, mix: { master: 0 } }, { kind: 'remove', id: 22 }] as const) {
    assert.equal(await why(room, await signLesson(mallory, applyCommand(v1.state, c), s1)), 'bad signature', c.kind);
  }
  // 6. Garbage, and a real state of another room.
  assert.equal(await why(room, { anchor: 1 }), 'malformed');
  assert.equal(await why(room, 'x'), 'malformed');
  const other = await newLessonKey();
  const otherRoom = await lessonRoomName(other.pub);
  assert.equal(await why(room, await signLesson(other, firstLesson(otherRoom, 1), null)), 'not the room key');

  // 7. The teacher's own older state, replayed: verifies, but is older than what was seen.
  assert.equal(compareLesson(v1, v0), 'older');
  assert.equal(compareLesson(v1, v1), 'same');
});

test('hand-over: the new teacher signs from then on, the old one no longer can; a second hand-over by the old teacher is a fork', async () => {
  const t1 = await newLessonKey();
  const room = await lessonRoomName(t1.pub);
  const s0 = await signLesson(t1, applyCommand(firstLesson(room, 1), { kind: 'admit', id: 2 }), null);
  const v0 = await ok(room, s0);
  const t2 = await newLessonKey();
  // The hand-over itself: signed by the old teacher, naming the new one (client 2) as teacher.
  const h = await handOver(t1, applyCommand(v0.state, { kind: 'hand-over', id: 2 }), s0, t2.pub);
  const vh = await ok(room, h);
  assert.equal(vh.signer, t1.pub);
  assert.equal(vh.state.teacher, 2);
  assert.equal(teacherKeyOf(vh.signed), t2.pub);
  assert.equal(compareLesson(v0, vh), 'newer');
  // The old teacher cannot sign a second state at the hand-over's n (it is not newer) nor after it.
  const again = await ok(room, await signLesson(t1, { ...vh.state, muted: [2] }, h));
  assert.equal(compareLesson(vh, again), 'older');
  // The new teacher signs from then on.
  const s1 = await signLesson(t2, applyCommand(vh.state, { kind: 'admit', id: 3 }), h);
  const v1 = await ok(room, s1);
  assert.equal(v1.signer, t2.pub);
  assert.equal(compareLesson(vh, v1), 'newer');
  // The old teacher signs a newer state on the new chain: rejected (the chain's last key signs).
  assert.equal(await why(room, await signLesson(t1, applyCommand(v1.state, { kind: 'remove', id: 2 }), s1)), 'bad signature');
  // ...or on the old chain with a higher n: it verifies, but is not an extension of the chain seen.
  const back = await ok(room, await signLesson(t1, { ...applyCommand(v1.state, { kind: 'remove', id: 2 }), n: 99 }, s0));
  assert.equal(compareLesson(v1, back), 'older');
  // A second hand-over by the old teacher, to a third key: a fork, never taken.
  const t3 = await newLessonKey();
  const forkChain = await handOver(t1, { ...applyCommand(v0.state, { kind: 'teacher-here', id: 3 }) }, s0, t3.pub);
  const fork = await ok(room, await signLesson(t3, { ...v1.state, n: 50 }, forkChain));
  assert.equal(compareLesson(v1, fork), 'fork');
});

test('commands: admit, decline, mute, set a mix (versioned), remove, the teacher rejoining', () => {
  let s = firstLesson('lesson-x', 1);
  s = applyCommand(s, { kind: 'admit', id: 2 });
  s = applyCommand(s, { kind: 'decline', id: 3 });
  assert.deepEqual([standingOf(s, 2), standingOf(s, 3)], ['admitted', 'removed']);
  s = applyCommand(s, { kind: 'mute', id: 2, on: true });
  assert.deepEqual(s.muted, [2]);
  s = applyCommand(s, { kind: 'set-mix', id: 2, mix: { master: 0.5, depth: 6, adaptive: false } });
  assert.deepEqual(s.mixes['2'], { master: 0.5, depth: 6, adaptive: false, v: s.n });
  s = applyCommand(s, { kind: 'mute', id: 2, on: false });
  assert.deepEqual(s.muted, []);
  s = applyCommand(s, { kind: 'admit', id: 3 });
  assert.equal(standingOf(s, 3), 'admitted', 'a declined newcomer can still be admitted');
  s = applyCommand(s, { kind: 'remove', id: 2 });
  assert.equal(standingOf(s, 2), 'removed');
  s = applyCommand(s, { kind: 'teacher-here', id: 9 });
  assert.equal(s.teacher, 9);
  assert.equal(s.n, 8);
  s = applyCommand(s, { kind: 'hand-over', id: 3 });
  assert.deepEqual([s.teacher, standingOf(s, 9), standingOf(s, 3)], [3, 'admitted', 'teacher'], 'the teacher before stays in');
});
