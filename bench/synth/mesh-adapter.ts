// The synthetic senders' only contact with Tutti's room layer (page main thread, P4 scale). Each
// synthetic member joins like a real peer: an iframe of the synth page running the app's own Room
// (own Y.Doc, unmodified y-webrtc provider on our /signal, own awareness client id) and publishing
// a participant MemberState whose `audio` mailbox carries offer/answer by src/room/audio-mesh.ts's
// rules. One iframe per member because y-webrtc allows one provider per room name per JS realm.
// The audio RTCPeerConnections live in the host page (SyntheticMesh), which hands each
// 'tutti-audio' channel to the sender worker. A change of the app's negotiation touches only here.

import { gathered } from '../../src/room/audio-mesh.ts';
import { AUDIO_CHANNEL_INIT, AUDIO_CHANNEL_LABEL } from '../../src/shared/audio-channel.ts';
import { Room } from '../../src/room/room.ts';
import type { AudioSdp, MemberState } from '../../src/shared/signaling-protocol.ts';

/** Names of synthetic members; they link only with real participants, never with each other. */
const PREFIX = 'synthetic-';
/** As the app: an offerer whose link failed offers again after this long. */
const RETRY_MS = 1500;

/** The host page's side of a member's audio links (called across the iframe boundary). */
export interface LinkHost {
  /** New link as offerer; resolves with the complete offer SDP. `onfail` runs if the link dies. */
  offer(member: string, peer: string, onfail: () => void): Promise<string>;
  /** Apply the answer to the member's current offer. */
  accept(member: string, peer: string, sdp: string): Promise<void>;
  /** New link as answerer of `offer`; resolves with the complete answer SDP. */
  answer(member: string, peer: string, offer: string, onfail: () => void): Promise<string>;
  close(member: string, peer: string): void;
}

declare global {
  interface Window {
    /** Set on the host page; member iframes reach it through window.parent. */
    __synthLinks?: LinkHost;
  }
}

/** Host page: creates member iframes and owns their audio RTCPeerConnections. */
export class SyntheticMesh implements LinkHost {
  private readonly pcs = new Map<string, RTCPeerConnection>();
  private count = 0;

  /** `onChannel` receives each new audio channel at creation (transfer it before it opens). */
  constructor(
    private readonly signalUrl: string,
    private readonly room: string,
    private readonly onChannel: (member: string, channel: RTCDataChannel) => void,
  ) {
    window.__synthLinks = this;
  }

  /** Add a synthetic member (an iframe that joins the room); returns its id, which is also its name. */
  addMember(): string {
    const id = `${PREFIX}${String(this.count++).padStart(2, '0')}`;
    const frame = document.createElement('iframe');
    frame.src = `${location.pathname}?${new URLSearchParams({ member: id, signal: this.signalUrl, room: this.room })}`;
    document.body.append(frame);
    return id;
  }

  async offer(member: string, peer: string, onfail: () => void): Promise<string> {
    const pc = this.create(member, peer, onfail);
    this.onChannel(member, pc.createDataChannel(AUDIO_CHANNEL_LABEL, AUDIO_CHANNEL_INIT));
    await pc.setLocalDescription(await pc.createOffer());
    await gathered(pc);
    return pc.localDescription!.sdp;
  }

  async accept(member: string, peer: string, sdp: string): Promise<void> {
    const pc = this.pcs.get(`${member}|${peer}`);
    if (!pc) throw new Error(`no link ${member}|${peer}`);
    await pc.setRemoteDescription({ type: 'answer', sdp });
  }

  async answer(member: string, peer: string, offer: string, onfail: () => void): Promise<string> {
    const pc = this.create(member, peer, onfail);
    pc.ondatachannel = (ev) => {
      if (ev.channel.label === AUDIO_CHANNEL_LABEL) this.onChannel(member, ev.channel);
    };
    await pc.setRemoteDescription({ type: 'offer', sdp: offer });
    await pc.setLocalDescription(await pc.createAnswer());
    await gathered(pc);
    return pc.localDescription!.sdp;
  }

  close(member: string, peer: string): void {
    const key = `${member}|${peer}`;
    const pc = this.pcs.get(key);
    this.pcs.delete(key);
    if (pc) {
      pc.onconnectionstatechange = pc.ondatachannel = null;
      pc.close();
    }
  }

  private create(member: string, peer: string, onfail: () => void): RTCPeerConnection {
    this.close(member, peer);
    const key = `${member}|${peer}`;
    const pc = new RTCPeerConnection();
    this.pcs.set(key, pc);
    pc.onconnectionstatechange = () => {
      if ((pc.connectionState === 'failed' || pc.connectionState === 'closed') && this.pcs.get(key) === pc) {
        this.close(member, peer);
        onfail();
      }
    };
    return pc;
  }
}

interface MemberLink {
  gen: number;
  offerer: boolean;
  answered: boolean;
}

/** Member iframe: one synthetic roster entry, negotiating its audio links through room awareness. */
export class SyntheticMember {
  readonly room: Room;
  private readonly links = new Map<string, MemberLink>();
  private readonly outbox: Record<string, AudioSdp> = {};
  private readonly retry = new Map<string, ReturnType<typeof setTimeout>>();
  /** As the app: the offer generation last answered per peer, so a stale offer is not answered twice. */
  private readonly answeredGen = new Map<string, number>();

  constructor(
    readonly id: string,
    signalUrl: string,
    roomName: string,
    private readonly host: LinkHost,
  ) {
    if (!id.startsWith(PREFIX)) throw new Error(`synthetic member names start with ${PREFIX}`);
    this.room = new Room({ name: roomName, password: '', signalingUrl: signalUrl, iceServers: [] });
    // The local IndexedDB copy is of no use to a synthetic member, and N of them writing one
    // database only loads the sender machine; the receiver cannot tell.
    void this.room.persistence.destroy();
    const self: MemberState = { v: 1, name: id, role: 'student', instrument: 'synthetic', muted: false, format: 'stereo', kind: 'participant', audio: {} };
    this.room.setSelf(self);
    this.room.provider.awareness.on('change', this.sync);
    this.sync();
  }

  /** The app's rule (AudioMesh.sync): the smaller client id, compared as strings, offers. */
  private readonly sync = (): void => {
    const self = String(this.room.clientId);
    const present = new Set<string>();
    for (const [cid, m] of this.room.roster()) {
      const id = String(cid);
      if (id === self || m.kind !== 'participant' || m.name.startsWith(PREFIX)) continue;
      present.add(id);
      const link = this.links.get(id);
      const theirs = m.audio?.[self];
      if (self < id) {
        if (!link && !this.retry.has(id)) void this.offer(id).catch((err: unknown) => this.fail(id, err));
        else if (link && !link.answered && theirs?.type === 'answer' && theirs.gen === link.gen) {
          link.answered = true;
          void this.host.accept(this.id, id, theirs.sdp).catch((err: unknown) => this.fail(id, err));
        }
      } else if (theirs?.type === 'offer' && link?.gen !== theirs.gen && this.answeredGen.get(id) !== theirs.gen) {
        void this.answer(id, theirs).catch((err: unknown) => this.fail(id, err));
      }
    }
    for (const id of [...this.links.keys()]) if (!present.has(id)) this.drop(id, false);
    for (const id of [...this.answeredGen.keys()]) if (!present.has(id)) this.answeredGen.delete(id);
  };

  private async offer(peer: string): Promise<void> {
    const link: MemberLink = { gen: Math.floor(Math.random() * 2 ** 31), offerer: true, answered: false };
    this.links.set(peer, link);
    const sdp = await this.host.offer(this.id, peer, () => this.drop(peer, true));
    if (this.links.get(peer) !== link) return;
    this.outbox[peer] = { gen: link.gen, type: 'offer', sdp };
    this.publish();
  }

  private async answer(peer: string, offer: AudioSdp): Promise<void> {
    this.answeredGen.set(peer, offer.gen);
    const link: MemberLink = { gen: offer.gen, offerer: false, answered: true };
    this.links.set(peer, link);
    const sdp = await this.host.answer(this.id, peer, offer.sdp, () => this.drop(peer, false));
    if (this.links.get(peer) !== link) return;
    this.outbox[peer] = { gen: link.gen, type: 'answer', sdp };
    this.publish();
  }

  private fail(peer: string, err: unknown): void {
    console.error(`${this.id} ↔ ${peer}:`, err);
    this.drop(peer, this.links.get(peer)?.offerer ?? false);
  }

  /** Close a link; `retry`: as offerer, offer again later if the peer is still there. */
  private drop(peer: string, retry: boolean): void {
    const link = this.links.get(peer);
    if (!link) return;
    this.links.delete(peer);
    this.host.close(this.id, peer);
    if (this.outbox[peer]) {
      delete this.outbox[peer];
      this.publish();
    }
    if (retry && link.offerer) {
      this.retry.set(peer, setTimeout(() => {
        this.retry.delete(peer);
        this.sync();
      }, RETRY_MS));
    }
  }

  private publish(): void {
    this.room.patchSelf({ audio: { ...this.outbox } });
  }
}
