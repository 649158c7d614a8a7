// The open-rooms list (GET /rooms) kept by the signaling hub (Node): per topic, the sockets that
// listed it and their titles. The hub owns membership: it calls `withdrawAll` when a socket leaves
// a topic or goes away, and asks `announce` only for topics the socket is subscribed to.

import { MAX_ROOM_TITLE, type OpenRoom } from '../src/shared/signaling-protocol.ts';

interface Listing {
  title: string;
  locked: boolean;
}

export class OpenRoomsList<K extends object> {
  /** Per topic, its listers in announcement order (the newest one's title is shown). */
  private readonly byTopic = new Map<string, Map<K, Listing>>();
  /** Per lister, the topics it lists (bounded by maxPerLister). */
  private readonly byLister = new WeakMap<K, Set<string>>();

  constructor(
    private readonly maxPerLister: number,
    private readonly maxRooms: number,
  ) {}

  get size(): number {
    return this.byTopic.size;
  }

  /** List `topic` for `lister`; false (nothing changed) when a limit is reached. */
  announce(lister: K, topic: string, title: string, locked: boolean): boolean {
    let mine = this.byLister.get(lister);
    if (!mine) this.byLister.set(lister, (mine = new Set()));
    if (!mine.has(topic) && mine.size >= this.maxPerLister) return false;
    let by = this.byTopic.get(topic);
    if (!by) {
      if (this.byTopic.size >= this.maxRooms) return false;
      this.byTopic.set(topic, (by = new Map()));
    }
    // Control characters out, whitespace collapsed; an empty title shows the room's name.
    const clean = title.replace(/[\u0000-\u001f\u007f]/g, ' ').replace(/\s+/g, ' ').trim().slice(0, MAX_ROOM_TITLE) || topic.slice(0, MAX_ROOM_TITLE);
    by.delete(lister); // re-insert: the newest announcement's title is the one shown
    by.set(lister, { title: clean, locked });
    mine.add(topic);
    return true;
  }

  /** End `lister`'s listing of `topic` (no-op if it had none). */
  withdraw(lister: K, topic: string): void {
    if (!this.byLister.get(lister)?.delete(topic)) return;
    const by = this.byTopic.get(topic);
    by?.delete(lister);
    if (by?.size === 0) this.byTopic.delete(topic);
  }

  /** Busiest first; `subscribers` tells how many sockets are on a topic now. */
  list(subscribers: (topic: string) => number): OpenRoom[] {
    const out: OpenRoom[] = [];
    for (const [room, by] of this.byTopic) {
      let last: Listing | undefined;
      for (const l of by.values()) last = l;
      if (last) out.push({ room, title: last.title, locked: last.locked, connected: subscribers(room) });
    }
    return out.sort((a, b) => b.connected - a.connected || (a.room < b.room ? -1 : 1));
  }
}
