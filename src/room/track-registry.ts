// Recording tracks of the participants we hear (main thread). Each participant gets a track number
// the first time their audio link opens, and keeps it for this page's life: leaving and rejoining
// (a new room client id, a new audio slot in the worker) lands in the same track of a take, under
// their current name. They are recognised by MemberState.member (a random id their browser keeps),
// or by name for apps that do not send one. The number travels with the audio link to the network
// worker (add-peer), which stores it in the slot for the playback worklet (PEER_I32.TRACK); the
// names go to the recorder worker (recorder-bridge.ts).

import type { MemberState } from '../shared/signaling-protocol.ts';

const MEMBER_KEY = 'tutti.member';

/** This browser's member id (MemberState.member), made once and kept. */
export function memberId(): string {
  try {
    let id = localStorage.getItem(MEMBER_KEY);
    if (!id || id.length > 64) {
      id = crypto.randomUUID();
      localStorage.setItem(MEMBER_KEY, id);
    }
    return id;
  } catch {
    return crypto.randomUUID(); // storage refused: recognised for this page's life only
  }
}

export class TrackRegistry extends EventTarget {
  private readonly byKey = new Map<string, number>();
  private readonly names = new Map<number, string>();
  /** Which room client holds each track now. */
  private readonly holder = new Map<number, string>();
  private next = 1;

  /** The track of participant `peerId` (a room client id) with state `m`. */
  trackFor(peerId: string, m: MemberState): number {
    const key = m.member ? `member:${m.member}` : `name:${m.name}`;
    let t = this.byKey.get(key);
    if (t === undefined) {
      t = this.next++;
      this.byKey.set(key, t);
    }
    // A newer client with the same key took over (a rejoin: the old one is gone or going).
    this.holder.set(t, peerId);
    this.rename(peerId, m.name);
    return t;
  }

  /** The participant holding a track changed their name. */
  rename(peerId: string, name: string): void {
    for (const [t, holder] of this.holder) {
      if (holder !== peerId || this.names.get(t) === name) continue;
      this.names.set(t, name);
      this.dispatchEvent(new Event('change'));
    }
  }

  /** The track room client `peerId` holds now, if any. */
  trackOfPeer(peerId: string): number | undefined {
    for (const [t, holder] of this.holder) if (holder === peerId) return t;
    return undefined;
  }

  /** Every track's current name, by number. */
  all(): Record<number, string> {
    return Object.fromEntries(this.names);
  }
}
