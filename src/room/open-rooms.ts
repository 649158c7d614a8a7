// The server's open-rooms list (GET /rooms, kept by server/signaling.ts from members' announcements):
// fetched by the join view. A failure (offline, an older server) is an empty list, never an error.

import { parseOpenRooms, type OpenRoom } from '../shared/signaling-protocol.ts';

export interface OpenRoomsList {
  /** The server keeps a list (false: turned off there, or unreachable). */
  enabled: boolean;
  rooms: OpenRoom[];
  /** The server answered (false: offline or unreachable, worth asking again later). */
  answered: boolean;
}

/** The Y.Map `settings` key holding the title the room is listed under (absent = not listed). */
export const LISTING_KEY = 'listing';

export async function fetchOpenRooms(signal?: AbortSignal): Promise<OpenRoomsList> {
  try {
    const res = await fetch('/rooms', { cache: 'no-store', ...(signal ? { signal } : {}) });
    if (!res.ok) return { enabled: false, rooms: [], answered: true }; // e.g. a static host: no list
    const body = (await res.json()) as { enabled?: unknown };
    return { enabled: body.enabled === true, rooms: parseOpenRooms(body), answered: true };
  } catch {
    return { enabled: false, rooms: [], answered: false };
  }
}
