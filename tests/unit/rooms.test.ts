// Room helpers that need no browser: room names, links, the textarea diff, and the parsers for
// what peers put in a room's awareness and control map (untrusted input).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newRoomName, parseRoomLink, roomLink } from '../../src/room/directory.ts';
import { diff } from '../../src/room/text-binding.ts';
import { parseControlRequest, parseMemberState } from '../../src/shared/signaling-protocol.ts';
import { mulberry32 } from './prng.ts';

test('new room names: 26 base32 characters in groups of five, all different', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const n = newRoomName();
    assert.match(n, /^[a-z2-7]{5}(-[a-z2-7]{5}){4}-[a-z2-7]$/);
    seen.add(n);
  }
  assert.equal(seen.size, 2000);
  // Every character position varies (no constant prefix that would cut the entropy).
  const names = [...seen].map((n) => n.replace(/-/g, ''));
  for (let pos = 0; pos < 25; pos++) assert.ok(new Set(names.map((n) => n[pos])).size > 16, `position ${pos}`);
});

test('room links keep room, password and remote target in the fragment, and parse back', () => {
  const l = roomLink('https://host/app/', { room: 'a b&c', password: 'p#w=1', remote: 12345 });
  assert.ok(l.startsWith('https://host/app/#'));
  assert.equal(l.split('#')[0], 'https://host/app/', 'nothing before the fragment');
  assert.deepEqual(parseRoomLink(new URL(l).hash), { room: 'a b&c', password: 'p#w=1', remote: 12345 });
  assert.deepEqual(parseRoomLink('#room=x'), { room: 'x' });
  assert.equal(parseRoomLink('#key=only'), null);
  assert.equal(parseRoomLink(''), null);
  assert.equal(parseRoomLink('#room=' + 'z'.repeat(500))!.room.length, 80);
});

test('textarea diff: one minimal splice that turns a into b (seeded random edits)', () => {
  const rand = mulberry32(7);
  const alphabet = 'ab \n';
  const word = (n: number) => Array.from({ length: n }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
  for (let i = 0; i < 2000; i++) {
    const a = word(Math.floor(rand() * 20));
    const at = Math.floor(rand() * (a.length + 1));
    const del = Math.floor(rand() * (a.length - at + 1));
    const ins = word(Math.floor(rand() * 4));
    const b = a.slice(0, at) + ins + a.slice(at + del);
    const d = diff(a, b);
    assert.equal(a.slice(0, d.index) + d.insert + a.slice(d.index + d.remove), b);
    assert.ok(d.remove <= del && d.insert.length <= ins.length, 'never larger than the real edit');
  }
  assert.deepEqual(diff('hello', 'hello'), { index: 5, remove: 0, insert: '' });
  assert.deepEqual(diff('aaa', 'aaaa'), { index: 3, remove: 0, insert: 'a' });
});

test('awareness and control parsers accept what Tutti sends and reject malformed peers', () => {
  const ok = { v: 1, name: 'Tina', role: 'teacher', instrument: 'Piano', muted: false, format: 'stereo', kind: 'participant', audio: { '42': { gen: 1, type: 'offer', sdp: 'v=0' }, bad: { gen: 'x' } }, mix: { master: 1, depth: 8, peers: { '42': { gain: 0.5, muted: false }, junk: 3 } } };
  const m = parseMemberState(ok)!;
  assert.equal(m.name, 'Tina');
  assert.deepEqual(Object.keys(m.audio!), ['42']);
  assert.deepEqual(m.mix, { master: 1, depth: 8, peers: { '42': { gain: 0.5, muted: false } } });
  // The sample resolution and wire version: optional (apps before PCM24 publish neither).
  assert.equal(m.bits, undefined);
  assert.equal(m.wire, undefined);
  assert.deepEqual([parseMemberState({ ...ok, bits: 24, wire: 2 })!.bits, parseMemberState({ ...ok, bits: 24, wire: 2 })!.wire], [24, 2]);
  // When the microphone began: optional (apps before it, and remotes, do not say), a finite number.
  assert.equal(m.micSince, undefined);
  assert.equal(parseMemberState({ ...ok, micSince: 1_796_000_000_000 })!.micSince, 1_796_000_000_000);
  // A take in progress (for a paired remote): kept when well formed, dropped (not the member) when not.
  assert.deepEqual(parseMemberState({ ...ok, recording: { seconds: 3, bytes: 1e6, leftBytes: null } })!.recording, { seconds: 3, bytes: 1e6, leftBytes: null });
  assert.equal(m.recording, undefined);
  assert.equal(parseMemberState({ ...ok, recording: { seconds: 'x', bytes: 1 } })!.recording, undefined);
  for (const bad of [null, 3, 'x', {}, { ...ok, v: 2 }, { ...ok, role: 'admin' }, { ...ok, name: 'x'.repeat(41) }, { ...ok, kind: 'spy' }, { ...ok, format: 'opus' }, { ...ok, controls: 'me' }, { ...ok, bits: 32 }, { ...ok, bits: '24' }, { ...ok, wire: 0 }, { ...ok, wire: 1.5 }, { ...ok, wire: 'v2' }, { ...ok, micSince: 'now' }, { ...ok, micSince: Infinity }]) {
    assert.equal(parseMemberState(bad), null, JSON.stringify(bad)?.slice(0, 60));
  }
  assert.deepEqual(parseControlRequest({ seq: 1, from: 2, peer: { id: '3', gain: 0, muted: true } }), { seq: 1, from: 2, peer: { id: '3', gain: 0, muted: true } });
  assert.deepEqual(parseControlRequest({ seq: 2, from: 2, record: true }), { seq: 2, from: 2, record: true });
  for (const bad of [null, { seq: 1 }, { seq: 1, from: 2, record: 'yes' }, { seq: 1, from: 2, master: 'loud' }, { seq: 1, from: 2, peer: { id: 3, gain: 0, muted: true } }, { seq: 1, from: 2, depth: Infinity }]) {
    assert.equal(parseControlRequest(bad), null);
  }
});
