// Synthetic-sender bench page (main thread, P4 scale). As the host page: joins a Tutti room as N
// synthetic members over real RTCPeerConnections (SyntheticMesh) and hands their DataChannels to a
// sender worker. Loaded with ?member=… in an iframe: one synthetic member's room presence.

import type { FromSender, SenderStats, ToSender } from './synth-protocol.ts';
import { SyntheticMember, SyntheticMesh } from './mesh-adapter.ts';

declare global {
  interface Window {
    /** Connect to the room's signaling; call once. */
    __synthStart: (signalUrl: string, room: string) => void;
    /** Add `n` synthetic members; resolves when all their channels are open. */
    __synthAdd: (n: number) => Promise<void>;
    __synthStats: () => SenderStats | null;
    /** Seconds each member added so far took to open its audio channel, in order. */
    __synthJoinSeconds: number[];
  }
}

/** A member whose audio channel is not open by then fails __synthAdd (instead of hanging the bench). */
const OPEN_TIMEOUT_MS = 60_000;
const params = new URLSearchParams(location.search);
const member = params.get('member');
if (member !== null) joinAsMember(member);
else host();

function joinAsMember(id: string): void {
  const links = window.parent === window ? undefined : window.parent.__synthLinks;
  const signal = params.get('signal');
  const room = params.get('room');
  if (!links || !signal || !room) throw new Error('a synthetic member page needs ?signal=&room= and a host page as parent');
  (window as unknown as { __member: SyntheticMember }).__member = new SyntheticMember(id, signal, room, links); // for probes
}

function host(): void {
  const worker = new Worker(new URL('./sender.worker.ts', import.meta.url), { type: 'module', name: 'synthetic-sender' });
  const waiting = new Map<string, () => void>();
  let latest: SenderStats | null = null;
  let mesh: SyntheticMesh | null = null;
  worker.onmessage = (ev: MessageEvent<FromSender>) => {
    const m = ev.data;
    if (m.type === 'open') {
      waiting.get(m.id)?.();
      waiting.delete(m.id);
    } else latest = m.stats;
  };

  window.__synthStart = (signalUrl, room) => {
    mesh = new SyntheticMesh(signalUrl, room, (id, channel) => {
      worker.postMessage({ type: 'add', id, channel } satisfies ToSender, [channel as unknown as Transferable]);
    });
  };
  window.__synthJoinSeconds = [];
  window.__synthAdd = async (n) => {
    if (!mesh) throw new Error('__synthStart first');
    // One at a time: every member's awareness change is relayed by every other member (y-webrtc
    // re-broadcasts), all on this one main thread, so joining many at once swamps it and links
    // miss the app's connect timeout.
    for (let i = 0; i < n; i++) {
      const id = mesh.addMember();
      const t0 = performance.now();
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`${id}: audio channel not open after ${OPEN_TIMEOUT_MS / 1000} s`)), OPEN_TIMEOUT_MS);
        waiting.set(id, () => {
          clearTimeout(t);
          resolve();
        });
      });
      window.__synthJoinSeconds.push((performance.now() - t0) / 1000);
    }
  };
  window.__synthStats = () => latest;
}
