// Room names and links on the page (main thread): unguessable names for new rooms, the link
// format (room and optional password in the URL fragment, which browsers never send to a
// server), and the recent-rooms list kept in this device's localStorage.

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567'; // RFC 4648 base32, lower case

/** 128 random bits as 26 base32 characters, grouped for reading aloud: xxxxx-xxxxx-…-x. */
export function newRoomName(): string {
  return groupedBase32(crypto.getRandomValues(new Uint8Array(16)), 26);
}

/** The first `chars` base32 characters of `bytes` (which must hold 5 × chars bits), in groups of five joined by '-'. */
export function groupedBase32(bytes: Uint8Array, chars: number): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out.slice(0, chars).match(/.{1,5}/g)!.join('-');
}

export interface RoomLink {
  room: string;
  password?: string;
  /** Remote mode: the client id of the participant this device will control. */
  remote?: number;
}

/** `#room=…[&key=…][&remote=…]`: the fragment stays in the browser; servers never see it. */
export function roomLink(base: string, link: RoomLink): string {
  const p = new URLSearchParams({ room: link.room });
  if (link.password) p.set('key', link.password);
  if (link.remote !== undefined) p.set('remote', String(link.remote));
  return `${base}#${p.toString()}`;
}

export function parseRoomLink(hash: string): RoomLink | null {
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  const room = p.get('room')?.trim();
  if (!room) return null;
  const remote = Number(p.get('remote'));
  return {
    room: room.slice(0, 80),
    ...(p.get('key') ? { password: p.get('key')! } : {}),
    ...(p.has('remote') && Number.isSafeInteger(remote) ? { remote } : {}),
  };
}

export interface RecentRoom {
  room: string;
  /** Whether it had a password (the password itself is not stored). */
  locked: boolean;
  lastJoined: number;
}

const RECENT_KEY = 'tutti.recentRooms';
const RECENT_MAX = 8;

export function recentRooms(): RecentRoom[] {
  try {
    const v = JSON.parse(localStorage.getItem(RECENT_KEY) ?? '[]') as unknown;
    if (!Array.isArray(v)) return [];
    return v.filter((r): r is RecentRoom => typeof r === 'object' && r !== null && typeof (r as RecentRoom).room === 'string' && typeof (r as RecentRoom).lastJoined === 'number');
  } catch {
    return [];
  }
}

export function rememberRoom(room: string, locked: boolean): void {
  const list = [{ room, locked, lastJoined: Date.now() }, ...recentRooms().filter((r) => r.room !== room)].slice(0, RECENT_MAX);
  localStorage.setItem(RECENT_KEY, JSON.stringify(list));
}

export function forgetRoom(room: string): void {
  localStorage.setItem(RECENT_KEY, JSON.stringify(recentRooms().filter((r) => r.room !== room)));
}
