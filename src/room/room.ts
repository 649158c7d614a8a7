// One lesson room on the page (main thread): its Y.Doc (notes, setlist, settings, control
// requests), the y-webrtc provider on OUR signaling server only, y-indexeddb persistence, the
// roster (awareness), and an honest wrong-password detector (./access.ts decides; this file
// feeds it what the signaling socket carries). No audio passes through here.

import * as Y from 'yjs';
import { WebrtcProvider } from 'y-webrtc';
import { IndexeddbPersistence } from 'y-indexeddb';
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import * as buffer from 'lib0/buffer';
import { parseMemberState, type ControlRequest, type MemberState, type SignalingClientMessage } from '../shared/signaling-protocol.ts';
import { ANSWER_FIELD, AccessTracker, type Access } from './access.ts';
import { StuckLinks, type RoomLinkLike } from './stuck-links.ts';

export { WRONG_PASSWORD_AFTER_MS, type Access } from './access.ts';

/** Label of y-webrtc's own (Yjs) data channels, distinct from the worker-owned 'tutti-audio'. */
export const ROOM_CHANNEL_LABEL = 'tutti-room';

export interface SetlistItem {
  id: string;
  text: string;
  done: boolean;
}

export interface RoomOptions {
  name: string;
  password: string;
  signalingUrl: string;
  iceServers: RTCIceServer[];
}

/** Minimal structural view of y-webrtc's SignalingConn (lib0 WebsocketClient); untyped upstream. */
interface SignalingConnLike {
  readonly connected: boolean;
  on(event: 'message' | 'connect', fn: (m: unknown) => void): void;
  off(event: 'message' | 'connect', fn: (m: unknown) => void): void;
  /** JSON-encodes and sends on the socket (lib0 WebsocketClient). */
  send(m: SignalingClientMessage): void;
}

export class Room {
  readonly doc = new Y.Doc();
  readonly notes = this.doc.getText('notes');
  readonly setlist = this.doc.getArray<SetlistItem>('setlist');
  readonly settings = this.doc.getMap<unknown>('settings');
  readonly control = this.doc.getMap<ControlRequest>('control');
  /** A lesson room's signed teacher state (src/room/lesson.ts); written by anyone, trusted only when signed. */
  readonly lesson = this.doc.getMap<unknown>('lesson');
  readonly provider: WebrtcProvider;
  readonly persistence: IndexeddbPersistence;
  /** Resolves when the local copy from IndexedDB is loaded (works offline). */
  readonly loaded: Promise<void>;
  access: Access = 'connecting';
  onaccess: (a: Access) => void = () => {};
  onroster: () => void = () => {};
  private readonly tracker = new AccessTracker(Date.now());
  /** Room links y-webrtc would leave waiting forever (./stuck-links.ts). */
  readonly stuckLinks = new StuckLinks();
  private readonly timer: ReturnType<typeof setInterval>;
  private conns: SignalingConnLike[];
  private offlineState: Record<string, unknown> | null = null;
  /** The title this room is listed under on the server's open rooms; null = not listed by us. */
  private listing: string | null = null;

  constructor(readonly opts: RoomOptions) {
    // The local copy is keyed by a hash of the password too: a wrong password on a shared device
    // does not open the cached notes of the real room.
    this.persistence = new IndexeddbPersistence(`tutti-room:${opts.name}:${passwordTag(opts.password)}`, this.doc);
    this.loaded = this.persistence.whenSynced.then(() => undefined);
    this.provider = new WebrtcProvider(opts.name, this.doc, {
      signaling: [opts.signalingUrl],
      ...(opts.password ? { password: opts.password } : {}),
      maxConns: 31,
      filterBcConns: true,
      peerOpts: { channelName: ROOM_CHANNEL_LABEL, config: { iceServers: opts.iceServers } },
    });
    this.conns = this.provider.signalingConns as SignalingConnLike[];
    this.listen(this.conns);
    this.provider.awareness.on('change', this.onAwareness);
    this.timer = setInterval(() => {
      this.updateAccess();
      this.restartStuckLinks();
    }, 500);
  }

  get clientId(): number {
    return this.doc.clientID;
  }

  /** Subscribers the server reported for the room's topic (including us), from the last relay. */
  get topicClients(): number {
    return this.tracker.topicClients;
  }
  /** Signaling messages on our topic that our key could not read. */
  get foreign(): number {
    return this.tracker.foreign;
  }

  setSelf(state: MemberState): void {
    this.provider.awareness.setLocalState(state);
  }
  patchSelf(patch: Partial<MemberState>): void {
    const cur = this.provider.awareness.getLocalState() as MemberState | null;
    if (cur) this.provider.awareness.setLocalState({ ...cur, ...patch });
  }
  self(): MemberState | null {
    return parseMemberState(this.provider.awareness.getLocalState());
  }

  /** Everyone in the room with a valid state, us included, by client id. */
  roster(): Map<number, MemberState> {
    const out = new Map<number, MemberState>();
    this.provider.awareness.getStates().forEach((s, id) => {
      const m = parseMemberState(s);
      if (m) out.set(id, m);
    });
    return out;
  }

  addItem(text: string): void {
    const t = text.trim().slice(0, 200);
    if (t) this.setlist.push([{ id: crypto.randomUUID(), text: t, done: false }]);
  }
  toggleItem(id: string): void {
    const i = this.setlist.toArray().findIndex((x) => x.id === id);
    if (i < 0) return;
    const item = this.setlist.get(i);
    this.doc.transact(() => {
      this.setlist.delete(i, 1);
      this.setlist.insert(i, [{ ...item, done: !item.done }]);
    });
  }
  removeItem(id: string): void {
    const i = this.setlist.toArray().findIndex((x) => x.id === id);
    if (i >= 0) this.setlist.delete(i, 1);
  }

  /** Leave the network but keep the document (and IndexedDB) open: edits keep accumulating locally. */
  disconnect(): void {
    this.offlineState = this.provider.awareness.getLocalState();
    this.unlisten(this.conns);
    this.provider.disconnect(); // y-webrtc also clears our awareness state
  }
  /** Back online: y-webrtc reconnects, and the document merges with whoever is there. */
  reconnect(): void {
    this.provider.connect();
    this.conns = this.provider.signalingConns.slice(-1) as SignalingConnLike[]; // connect() appends; we use one URL
    this.listen(this.conns);
    if (this.offlineState) this.provider.awareness.setLocalState(this.offlineState);
    this.offlineState = null;
  }

  destroy(): void {
    clearInterval(this.timer);
    this.unlisten(this.conns);
    this.provider.awareness.off('change', this.onAwareness);
    // disconnect() first: it unsubscribes and closes the signaling socket at once, so the same
    // room can be joined again right away (destroy() alone releases the room name asynchronously).
    this.provider.disconnect();
    this.provider.destroy();
    void this.persistence.destroy();
    this.doc.destroy();
  }

  /**
   * List this room on the server's open-rooms list under `title` (null: withdraw our listing).
   * The server keeps it while our socket is subscribed to the room, so it is re-sent on every
   * reconnect and ends by itself when we leave.
   */
  setListing(title: string | null): void {
    if (title === this.listing) return;
    const was = this.listing;
    this.listing = title;
    if (title !== null || was !== null) for (const c of this.conns) this.sendListing(c);
  }

  private sendListing(c: SignalingConnLike): void {
    if (!c.connected) return;
    const topic = this.opts.name;
    c.send(this.listing === null ? { type: 'tutti-unannounce', topic } : { type: 'tutti-announce', topic, title: this.listing, locked: this.opts.password !== '' });
  }

  private listen(conns: SignalingConnLike[]): void {
    for (const c of conns) {
      c.on('message', this.onSignal);
      // Registered after y-webrtc's own 'connect' handler, which subscribes first (same socket, in order).
      c.on('connect', this.onConnect);
    }
  }
  private unlisten(conns: SignalingConnLike[]): void {
    for (const c of conns) {
      c.off('message', this.onSignal);
      c.off('connect', this.onConnect);
    }
  }

  private readonly onConnect = (): void => {
    if (this.listing !== null) for (const c of this.conns) this.sendListing(c);
  };

  private readonly onAwareness = (): void => {
    this.updateAccess();
    this.onroster();
  };

  /** Watch y-webrtc's signaling for our topic: the server's subscriber count, and unreadable data. */
  private readonly onSignal = (raw: unknown): void => {
    const m = raw as { type?: unknown; topic?: unknown; data?: unknown; clients?: unknown; [ANSWER_FIELD]?: unknown } | null;
    if (m?.type !== 'publish' || m.topic !== this.opts.name) return;
    const clients = typeof m.clients === 'number' ? m.clients : null;
    void this.provider.key.then(async (key) => {
      const relay = { clients, readable: await readable(m.data, key), answer: m[ANSWER_FIELD] === true };
      if (this.tracker.relay(relay, Date.now())) void this.answerUnreadable(key);
      this.updateAccess();
    });
  };

  /**
   * Someone on our topic speaks with another key. Tell them we are here, in ours: y-webrtc's own
   * `announce` (harmless to members, who know us or connect), marked as an answer so it is not
   * answered back. A newcomer with a different password learns it from this; a socket that never
   * speaks gets no answer and so is never mistaken for one (PROTOCOL.md §3.6).
   */
  private async answerUnreadable(key: CryptoKey | null): Promise<void> {
    const peerId = this.provider.room?.peerId;
    if (!peerId) return;
    const announce = { type: 'announce', from: peerId };
    const data = key ? buffer.toBase64(await seal(announce, key)) : announce;
    for (const c of this.conns) if (c.connected) c.send({ type: 'publish', topic: this.opts.name, data, [ANSWER_FIELD]: true });
  }

  private restartStuckLinks(): void {
    const room = this.provider.room;
    if (!room) return;
    // y-webrtc's WebrtcConn, typed only as far as we read it; destroy() ends the link and makes
    // y-webrtc announce us again.
    const links = room.webrtcConns as unknown as ReadonlyMap<string, RoomLinkLike & { destroy(): void }>;
    for (const link of this.stuckLinks.check(links, room.peerId, Date.now())) link.destroy();
  }

  private updateAccess(): void {
    let others = 0;
    this.provider.awareness.getStates().forEach((_s, id) => { if (id !== this.clientId) others++; });
    const a = this.tracker.update(others, Date.now());
    if (a !== this.access) {
      this.access = a;
      this.onaccess(a);
    }
  }
}

/** y-webrtc's encryption of a signaling payload (lib0 `writeAny`, then AES-GCM), as its peers read it. */
async function seal(data: Record<string, string>, key: CryptoKey): Promise<Uint8Array> {
  const plain = encoding.createEncoder();
  encoding.writeAny(plain, data);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const cipher = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, encoding.toUint8Array(plain) as Uint8Array<ArrayBuffer>);
  const out = encoding.createEncoder();
  encoding.writeVarString(out, 'AES-GCM');
  encoding.writeVarUint8Array(out, iv);
  encoding.writeVarUint8Array(out, new Uint8Array(cipher));
  return encoding.toUint8Array(out);
}

/**
 * Can our key read this y-webrtc signaling payload? With a password, y-webrtc sends base64 of
 * lib0-encoded { 'AES-GCM', iv, ciphertext }; AES-GCM's tag fails for any other key. Without
 * one, payloads are plain objects, and an encrypted (string) payload means the others have one.
 */
async function readable(data: unknown, key: CryptoKey | null): Promise<boolean> {
  if (!key) return typeof data === 'object' && data !== null;
  if (typeof data !== 'string') return false;
  try {
    const dec = decoding.createDecoder(buffer.fromBase64(data));
    if (decoding.readVarString(dec) !== 'AES-GCM') return false;
    const iv = decoding.readVarUint8Array(dec);
    const cipher = decoding.readVarUint8Array(dec);
    await crypto.subtle.decrypt({ name: 'AES-GCM', iv: iv as Uint8Array<ArrayBuffer> }, key, cipher as Uint8Array<ArrayBuffer>);
    return true;
  } catch {
    return false;
  }
}

/** Short non-reversible tag of the password for the IndexedDB name (FNV-1a; not a secret store). */
function passwordTag(password: string): string {
  if (!password) return 'open';
  let h = 0x811c9dc5;
  for (let i = 0; i < password.length; i++) h = Math.imul(h ^ password.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
}

/**
 * The Yjs client id that wrote `key`'s current value in `map` (or deleted it): taken from the
 * stored change itself, so it names the device that made it whatever the value claims. Yjs keeps
 * it on the map's item (`_map`, not in its typed API); undefined if the key was never written.
 */
export function writerOf(map: Y.Map<unknown>, key: string): number | undefined {
  const item = (map as unknown as { _map: Map<string, { id: { client: number } }> })._map.get(key);
  return item?.id.client;
}
