// The synthetic senders' only contact with Tutti's room signaling (page main thread): speaks the
// app's audio-mesh protocol (src/room/audio-mesh.ts, src/shared/signaling-protocol.ts) for many
// synthetic members over one signaling socket. Kept in one file so a change of the app's mesh
// negotiation touches only this adapter.

import { SignalingClient } from '../../src/room/signaling-client.ts';
import { audioTopic, parseMeshMessage, type MeshMessage } from '../../src/shared/signaling-protocol.ts';

/** The app's audio channel: unordered, no retransmits, label 'tutti-audio'. */
const AUDIO_LABEL = 'tutti-audio';
const AUDIO_INIT: RTCDataChannelInit = { ordered: false, maxRetransmits: 0 };

interface Link {
  pc: RTCPeerConnection;
  pending: RTCIceCandidateInit[];
}

export class SyntheticMesh {
  private readonly signaling: SignalingClient;
  private readonly topic: string;
  private readonly members = new Set<string>();
  private readonly links = new Map<string, Link>();

  /** `onChannel` receives each new audio channel at creation (transfer it before it opens). */
  constructor(signalUrl: string, room: string, private readonly onChannel: (memberId: string, channel: RTCDataChannel) => void) {
    this.signaling = new SignalingClient(signalUrl);
    this.topic = audioTopic(room);
    this.signaling.onmessage = (topic, data) => {
      if (topic !== this.topic) return;
      const m = parseMeshMessage(data);
      if (m && !this.members.has(m.from)) this.onMesh(m).catch((err: unknown) => console.error('synthetic mesh:', err));
    };
    this.signaling.onopen = () => {
      for (const id of this.members) this.publish({ type: 'tutti-hello', from: id, name: id });
    };
    this.signaling.subscribe(this.topic);
  }

  /**
   * Add a synthetic member and announce it. Ids start with '!' so they sort before the app's UUIDs:
   * by the app's rule the smaller id offers, so every link is offered from here.
   */
  addMember(index: number): string {
    const id = `!synthetic-${String(index).padStart(2, '0')}`;
    this.members.add(id);
    this.publish({ type: 'tutti-hello', from: id, name: id });
    return id;
  }

  private publish(m: MeshMessage): void {
    this.signaling.publish(this.topic, m);
  }

  private async onMesh(m: MeshMessage): Promise<void> {
    const targets = 'to' in m && m.to !== undefined ? (this.members.has(m.to) ? [m.to] : []) : [...this.members];
    for (const member of targets) {
      const key = `${member}|${m.from}`;
      const link = this.links.get(key);
      switch (m.type) {
        case 'tutti-hello':
          if (!link) await this.offer(member, m.from, key);
          break;
        case 'tutti-signal':
          if (!link) break;
          if (m.description?.type === 'answer') {
            await link.pc.setRemoteDescription(m.description);
            for (const c of link.pending.splice(0)) await link.pc.addIceCandidate(c);
          } else if (m.candidate) {
            if (link.pc.remoteDescription) await link.pc.addIceCandidate(m.candidate);
            else link.pending.push(m.candidate);
          }
          break;
        case 'tutti-bye':
          link?.pc.close();
          this.links.delete(key);
          break;
        default:
          m satisfies never;
      }
    }
  }

  private async offer(member: string, remote: string, key: string): Promise<void> {
    const pc = new RTCPeerConnection();
    this.links.set(key, { pc, pending: [] });
    pc.onicecandidate = (ev) => this.publish({ type: 'tutti-signal', from: member, to: remote, candidate: ev.candidate ? ev.candidate.toJSON() : null });
    this.onChannel(member, pc.createDataChannel(AUDIO_LABEL, AUDIO_INIT));
    await pc.setLocalDescription(await pc.createOffer());
    const d = pc.localDescription!;
    this.publish({ type: 'tutti-signal', from: member, to: remote, description: { type: d.type, sdp: d.sdp } });
  }
}
