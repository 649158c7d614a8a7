// Page (main thread): the teacher's authority in a lesson room (issue 12, item 3), pure apart from
// WebCrypto (unit-tested in Node). Anyone with a room's password can write its Yjs document, so
// the teacher's commands are not trusted for where they are written but for who signed them.
//
// The trust anchor is the room's name. "Create lesson room" makes an ECDSA P-256 key pair on the
// teacher's device and names the room after the public key: LESSON_PREFIX + the first 130 bits of
// its SHA-256, in base32 (lessonRoomName). Whoever joins by that name (the link, the QR code)
// knows the teacher's key without asking anyone, and no one can make another key with that name.
//
// The lesson's whole state (who is admitted, muted, removed; the mixes the teacher set) is one
// signed document, SignedLesson, kept under LESSON_STATE in the room's `lesson` map:
//   anchor     the room key (its fingerprint must be the room's name)
//   handovers  the teacher role handed on: each names the next key and the state number it took
//              effect at, and is signed by the key before it
//   body       LessonState as JSON, signed by the last key of the chain (the teacher now); the
//              hand-over's own state (its n) by the key that handed over
// Every device verifies the chain and the signature, and keeps the newest it has verified (acceptLesson):
// a higher `n` on the same chain or a longer chain. Anything else written there (a forged state, an
// old one replayed, a chain that forks from the one seen) is ignored and logged, and every device
// writes back the newest it knows (it is signed: any device may restore it).

import type { MixState } from '../shared/signaling-protocol.ts';
import { groupedBase32 } from './directory.ts';

/** Lesson rooms' names: this prefix, then the teacher key's fingerprint. */
export const LESSON_PREFIX = 'lesson-';
/** The key in the room's `lesson` map that holds the SignedLesson. */
export const LESSON_STATE = 'state';

/** A mix the teacher set for one student (applied by the student's device; `v` orders them). */
export interface LessonMix {
  v: number;
  master?: number;
  depth?: number;
  adaptive?: boolean;
  /** Per peer, by client id (as a string). */
  peers?: MixState['peers'];
}

/** What the teacher decides, as every device applies it. Client ids are this session's (Yjs). */
export interface LessonState {
  v: 1;
  room: string;
  /** Increases with every signed change. */
  n: number;
  /** The teacher device's client id now. */
  teacher: number;
  admitted: number[];
  muted: number[];
  removed: number[];
  /** By student client id. */
  mixes: Record<string, LessonMix>;
}

export interface Handover {
  /** The next teacher's public key (raw P-256, base64). */
  to: string;
  /** The state (LessonState.n) that hands over: signed by the key before; every later one by `to`. */
  n: number;
  /** By the key before it, over handoverText(room, index, to, n). */
  sig: string;
}

export interface SignedLesson {
  anchor: string;
  handovers: Handover[];
  body: string;
  sig: string;
}

/** A SignedLesson that verified: its state and the key that signed it (base64). */
export interface VerifiedLesson {
  signed: SignedLesson;
  state: LessonState;
  signer: string;
}

const ALGO = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;
const enc = new TextEncoder();

export function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

export function fromBase64(s: string): Uint8Array<ArrayBuffer> | null {
  try {
    const bin = atob(s);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

/** The lesson room named after public key `pub` (base64 raw): LESSON_PREFIX + 26 base32 characters of its SHA-256, grouped by 5. */
export async function lessonRoomName(pub: string): Promise<string> {
  const raw = fromBase64(pub);
  if (!raw) throw new Error('not a public key');
  const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', raw));
  return LESSON_PREFIX + groupedBase32(hash, 26);
}

/** Whether `room` is named as a lesson room (its teacher key is then fixed by the name). */
export function isLessonRoom(room: string): boolean {
  return /^lesson-[a-z2-7]{5}(-[a-z2-7]{5}){4}-[a-z2-7]$/.test(room);
}

/** A device's key pair for one lesson room; the private key cannot leave the browser. */
export interface LessonKey {
  privateKey: CryptoKey;
  /** Raw public key, base64. */
  pub: string;
}

export async function newLessonKey(): Promise<LessonKey> {
  const pair = await crypto.subtle.generateKey(ALGO, false, ['sign', 'verify']);
  const raw = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  return { privateKey: pair.privateKey, pub: toBase64(raw) };
}

async function sign(key: LessonKey, text: string): Promise<string> {
  return toBase64(new Uint8Array(await crypto.subtle.sign(SIGN, key.privateKey, enc.encode(text))));
}

async function verify(pub: string, sig: string, text: string): Promise<boolean> {
  const raw = fromBase64(pub);
  const s = fromBase64(sig);
  if (!raw || !s) return false;
  try {
    const key = await crypto.subtle.importKey('raw', raw, ALGO, false, ['verify']);
    return await crypto.subtle.verify(SIGN, key, s, enc.encode(text));
  } catch {
    return false;
  }
}

/** What a hand-over's signature covers: the room, the hand-over's place in the chain, the next key. */
function handoverText(room: string, index: number, to: string, n: number): string {
  return `tutti-lesson-handover:v1:${room}:${index}:${to}:${n}`;
}

/** The body's signature covers this (the room is inside the body too). */
function bodyText(body: string): string {
  return `tutti-lesson-state:v1:${body}`;
}

/** The teacher now (`key`, the last of the chain) signs `state` on the chain of `prev` (or as the room's first, `prev` null). */
export async function signLesson(key: LessonKey, state: LessonState, prev: SignedLesson | null): Promise<SignedLesson> {
  const body = JSON.stringify(state);
  return { anchor: prev?.anchor ?? key.pub, handovers: prev?.handovers ?? [], body, sig: await sign(key, bodyText(body)) };
}

/**
 * The teacher (`key`) hands the role to the holder of public key `to` with `state` (whose teacher is
 * the new one's client id): the new teacher signs every state after it.
 */
export async function handOver(key: LessonKey, state: LessonState, prev: SignedLesson, to: string): Promise<SignedLesson> {
  const cert: Handover = { to, n: state.n, sig: await sign(key, handoverText(state.room, prev.handovers.length, to, state.n)) };
  return signLesson(key, state, { ...prev, handovers: [...prev.handovers, cert] });
}

/** The key that signs the next state on this chain (the teacher now: the last handed to). */
export function teacherKeyOf(s: SignedLesson): string {
  return s.handovers.length ? s.handovers[s.handovers.length - 1]!.to : s.anchor;
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const ids = (v: unknown): v is number[] => Array.isArray(v) && v.length <= 256 && v.every(isInt);
const gain = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 2;

function parseMix(v: unknown): LessonMix | null {
  if (typeof v !== 'object' || v === null) return null;
  const m = v as Record<string, unknown>;
  if (!isInt(m['v'])) return null;
  if (m['master'] !== undefined && !gain(m['master'])) return null;
  if (m['depth'] !== undefined && !(isInt(m['depth']) && m['depth'] >= 1 && m['depth'] <= 64)) return null;
  if (m['adaptive'] !== undefined && typeof m['adaptive'] !== 'boolean') return null;
  const peers: MixState['peers'] = {};
  if (m['peers'] !== undefined) {
    if (typeof m['peers'] !== 'object' || m['peers'] === null) return null;
    for (const [id, p] of Object.entries(m['peers'] as Record<string, unknown>)) {
      const q = p as Record<string, unknown> | null;
      if (!q || !gain(q['gain']) || typeof q['muted'] !== 'boolean') return null;
      peers[id] = { gain: q['gain'], muted: q['muted'] };
    }
  }
  return {
    v: m['v'],
    ...(m['master'] !== undefined ? { master: m['master'] as number } : {}),
    ...(m['depth'] !== undefined ? { depth: m['depth'] as number } : {}),
    ...(m['adaptive'] !== undefined ? { adaptive: m['adaptive'] as boolean } : {}),
    ...(m['peers'] !== undefined ? { peers } : {}),
  };
}

/** Narrow an untrusted body to a LessonState for `room`, or null. */
export function parseLessonState(body: string, room: string): LessonState | null {
  let d: Record<string, unknown>;
  try {
    d = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof d !== 'object' || d === null || d['v'] !== 1 || d['room'] !== room || !isInt(d['n']) || !isInt(d['teacher'])) return null;
  if (!ids(d['admitted']) || !ids(d['muted']) || !ids(d['removed'])) return null;
  if (typeof d['mixes'] !== 'object' || d['mixes'] === null) return null;
  const mixes: Record<string, LessonMix> = {};
  for (const [id, m] of Object.entries(d['mixes'] as Record<string, unknown>)) {
    const p = parseMix(m);
    if (!p) return null;
    mixes[id] = p;
  }
  return { v: 1, room, n: d['n'], teacher: d['teacher'], admitted: d['admitted'], muted: d['muted'], removed: d['removed'], mixes };
}

/** Why a value written as the lesson state was not taken. */
export type Rejected = 'malformed' | 'not the room key' | 'bad hand-over' | 'bad signature' | 'other room';

/** Checks `raw` (what the room's document holds) against room `room`'s name: the chain, the signature, the body. */
export async function verifyLesson(room: string, raw: unknown): Promise<VerifiedLesson | { rejected: Rejected }> {
  if (typeof raw !== 'object' || raw === null) return { rejected: 'malformed' };
  const r = raw as Record<string, unknown>;
  if (typeof r['anchor'] !== 'string' || typeof r['body'] !== 'string' || typeof r['sig'] !== 'string' || !Array.isArray(r['handovers'])) return { rejected: 'malformed' };
  if (r['body'].length > 64_000 || r['handovers'].length > 64) return { rejected: 'malformed' };
  const handovers: Handover[] = [];
  for (const h of r['handovers'] as unknown[]) {
    const x = h as Record<string, unknown> | null;
    if (!x || typeof x['to'] !== 'string' || typeof x['sig'] !== 'string' || !isInt(x['n'])) return { rejected: 'malformed' };
    handovers.push({ to: x['to'], n: x['n'], sig: x['sig'] });
  }
  const signed: SignedLesson = { anchor: r['anchor'], handovers, body: r['body'], sig: r['sig'] };
  let name: string;
  try {
    name = await lessonRoomName(signed.anchor);
  } catch {
    return { rejected: 'malformed' };
  }
  if (name !== room) return { rejected: 'not the room key' };
  let key = signed.anchor;
  let before = key;
  for (let i = 0; i < handovers.length; i++) {
    const h = handovers[i]!;
    if ((i > 0 && h.n <= handovers[i - 1]!.n) || !(await verify(key, h.sig, handoverText(room, i, h.to, h.n)))) return { rejected: 'bad hand-over' };
    before = key;
    key = h.to;
  }
  const state = parseLessonState(signed.body, room);
  if (!state) return { rejected: (await verify(key, signed.sig, bodyText(signed.body))) || (await verify(before, signed.sig, bodyText(signed.body))) ? 'other room' : 'bad signature' };
  // The hand-over's own state is signed by the key that handed over; every later one by the new key.
  const last = handovers[handovers.length - 1];
  const signer = last && state.n === last.n ? before : key;
  if ((last && state.n < last.n) || !(await verify(signer, signed.sig, bodyText(signed.body)))) return { rejected: 'bad signature' };
  return { signed, state, signer };
}

/**
 * Whether verified `next` replaces `known` (the newest this device has verified): 'newer' on the
 * same chain (or one that extends it: a hand-over) with a higher n; 'same'; 'older' (a replay);
 * 'fork' (a chain that is not an extension of the one seen: an old teacher's second hand-over).
 */
export function compareLesson(known: VerifiedLesson | null, next: VerifiedLesson): 'newer' | 'same' | 'older' | 'fork' {
  if (!known) return 'newer';
  const a = known.signed.handovers;
  const b = next.signed.handovers;
  const common = Math.min(a.length, b.length);
  for (let i = 0; i < common; i++) if (a[i]!.to !== b[i]!.to) return 'fork';
  if (next.state.n > known.state.n && b.length >= a.length) return 'newer';
  if (next.state.n === known.state.n && next.signed.body === known.signed.body && b.length === a.length) return 'same';
  return 'older';
}

/** Where a member stands in the lesson. */
export type Standing = 'teacher' | 'admitted' | 'waiting' | 'removed';

export function standingOf(s: LessonState, id: number): Standing {
  if (s.removed.includes(id)) return 'removed';
  if (id === s.teacher) return 'teacher';
  return s.admitted.includes(id) ? 'admitted' : 'waiting';
}

/** Whether `id` may have audio links in the lesson (the teacher, or admitted and not removed). */
export function inLesson(s: LessonState | null, id: number): boolean {
  const st = s ? standingOf(s, id) : 'waiting';
  return st === 'teacher' || st === 'admitted';
}

/** The teacher's commands, as the next state (n + 1). */
export type LessonCommand =
  | { kind: 'admit'; id: number }
  | { kind: 'decline'; id: number }
  | { kind: 'mute'; id: number; on: boolean }
  | { kind: 'remove'; id: number }
  | { kind: 'set-mix'; id: number; mix: Omit<LessonMix, 'v'> }
  | { kind: 'teacher-here'; id: number }
  | { kind: 'hand-over'; id: number };

export function applyCommand(s: LessonState, c: LessonCommand): LessonState {
  const without = (xs: number[], id: number): number[] => xs.filter((x) => x !== id);
  const next: LessonState = { ...s, n: s.n + 1, admitted: [...s.admitted], muted: [...s.muted], removed: [...s.removed], mixes: { ...s.mixes } };
  switch (c.kind) {
    case 'admit':
      next.removed = without(next.removed, c.id);
      if (!next.admitted.includes(c.id)) next.admitted.push(c.id);
      break;
    case 'decline':
    case 'remove':
      next.admitted = without(next.admitted, c.id);
      if (!next.removed.includes(c.id)) next.removed.push(c.id);
      break;
    case 'mute':
      next.muted = without(next.muted, c.id);
      if (c.on) next.muted.push(c.id);
      break;
    case 'set-mix':
      next.mixes[String(c.id)] = { ...c.mix, v: next.n };
      break;
    case 'teacher-here':
      // The teacher's device (re)joined under client id `id`.
      next.admitted = without(next.admitted, c.id);
      next.removed = without(next.removed, c.id);
      next.teacher = c.id;
      break;
    case 'hand-over':
      // Member `id` becomes the teacher; the teacher before stays in the lesson.
      next.admitted = without(next.admitted, c.id);
      next.removed = without(next.removed, c.id);
      next.muted = without(next.muted, c.id);
      if (!next.admitted.includes(s.teacher)) next.admitted.push(s.teacher);
      next.teacher = c.id;
      break;
    default:
      c satisfies never;
  }
  return next;
}

/** The first state of a lesson room: only its teacher is in. */
export function firstLesson(room: string, teacher: number): LessonState {
  return { v: 1, room, n: 0, teacher, admitted: [], muted: [], removed: [], mixes: {} };
}
