// Reading a client's frame and writing its relay, for the signaling hub (Node). The hub looks only
// at the envelope (type, topic, topics, and the open-rooms fields) and relays a publish as the
// SAME BYTES it received, with the subscriber count spliced in: it never re-serialises client
// data, so nothing a client nests inside `data` can make it throw (JSON.stringify recurses;
// JSON.parse in V8 does not). Every step is linear in the frame's size, which `ws` bounds.

import { isUtf8 } from 'node:buffer';
import type { SignalingClientMessage } from '../src/shared/signaling-protocol.ts';

/** Why a frame was dropped (the hub counts each). */
export type FrameFault = 'not-utf8' | 'too-deep' | 'not-json' | 'not-object' | 'unknown-type' | 'bad-field';

/**
 * What the hub reads of a client message: the protocol's types (src/shared/signaling-protocol.ts)
 * with only the fields the hub needs, and topic lists still unchecked element by element.
 */
export type Envelope =
  | { type: 'subscribe'; topics: readonly unknown[] }
  | { type: 'unsubscribe'; topics: readonly unknown[] }
  | { type: 'publish'; topic: string }
  | { type: 'ping' }
  | { type: 'tutti-announce'; topic: string; title: string; locked: boolean }
  | { type: 'tutti-unannounce'; topic: string };

/** Compile-time check: every client message type of the protocol has an envelope here. */
type Unhandled = Exclude<SignalingClientMessage['type'], Envelope['type']>;
export const ENVELOPE_COVERS_PROTOCOL: [Unhandled] extends [never] ? true : Unhandled = true;

export type EnvelopeResult = { ok: true; msg: Envelope } | { ok: false; fault: FrameFault };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Deepest array/object nesting in `bytes`, stopping as soon as it exceeds `limit` (then returns
 * limit + 1). Brackets inside strings do not count. Only meaningful for text that is JSON; run
 * before JSON.parse so a deep value costs neither the parse's allocations nor a receiver's.
 */
export function nestingDepth(bytes: Uint8Array, limit: number): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_BRACKET || b === OPEN_BRACE) {
      if (++depth > max) {
        max = depth;
        if (max > limit) return limit + 1;
      }
    } else if (b === CLOSE_BRACKET || b === CLOSE_BRACE) depth--;
  }
  return max;
}

/**
 * Validate one frame as a signaling message: UTF-8 (text frames are checked by `ws`, binary ones
 * here), nesting at most `maxDepth`, JSON, an object, a known type with well-typed envelope
 * fields. Elements of `topics` are left for the hub to check one by one (a bad name is skipped,
 * not the frame). Never throws.
 */
export function parseEnvelope(bytes: Buffer, isBinary: boolean, maxDepth: number): EnvelopeResult {
  if (isBinary && !isUtf8(bytes)) return { ok: false, fault: 'not-utf8' };
  if (nestingDepth(bytes, maxDepth) > maxDepth) return { ok: false, fault: 'too-deep' };
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { ok: false, fault: 'not-json' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, fault: 'not-object' };
  // Own properties only: a frame's "__proto__" key is an own property after JSON.parse, and
  // nothing may be read from Object.prototype.
  const own = (k: string): unknown => (Object.hasOwn(value, k) ? (value as Record<string, unknown>)[k] : undefined);
  const type = own('type');
  const str = (k: string): string | null => {
    const v = own(k);
    return typeof v === 'string' ? v : null;
  };
  switch (type) {
    case 'subscribe':
    case 'unsubscribe': {
      const topics = own('topics');
      return Array.isArray(topics) ? { ok: true, msg: { type, topics } } : { ok: false, fault: 'bad-field' };
    }
    case 'publish': {
      const topic = str('topic');
      return topic !== null ? { ok: true, msg: { type, topic } } : { ok: false, fault: 'bad-field' };
    }
    case 'ping':
      return { ok: true, msg: { type } };
    case 'tutti-announce': {
      const topic = str('topic');
      const title = str('title');
      const locked = own('locked');
      return topic !== null && title !== null && typeof locked === 'boolean' ? { ok: true, msg: { type, topic, title, locked } } : { ok: false, fault: 'bad-field' };
    }
    case 'tutti-unannounce': {
      const topic = str('topic');
      return topic !== null ? { ok: true, msg: { type, topic } } : { ok: false, fault: 'bad-field' };
    }
    default:
      return { ok: false, fault: 'unknown-type' };
  }
}

/**
 * The relay of a publish: the client's own bytes with `,"clients":N` spliced in before the
 * closing brace. Receivers parse it with JSON.parse, where the last of duplicate keys wins, so
 * the hub's count replaces any `clients` the sender put in. `bytes` must be a JSON object (as
 * `parseEnvelope` accepted it): its last non-whitespace byte is that brace.
 */
export function withClients(bytes: Buffer, clients: number): Buffer {
  let end = bytes.length - 1;
  while (end >= 0 && (bytes[end] === 0x20 || bytes[end] === 0x0a || bytes[end] === 0x0d || bytes[end] === 0x09)) end--;
  if (bytes[end] !== CLOSE_BRACE) throw new Error('withClients: not a JSON object');
  const tail = Buffer.from(`,"clients":${clients}}`, 'latin1');
  return Buffer.concat([bytes.subarray(0, end), tail], end + tail.length);
}
