// The audio mesh of one room: one RTCPeerConnection per remote peer, negotiated over the room's
// signaling topic (y-webrtc protocol). Each connection's audio DataChannel goes to the network
// worker the moment it exists; this class only handles SDP, ICE and membership.

import { audioTopic, parseMeshMessage, type MeshMessage } from '../shared/signaling-protocol.ts';
import type { NetBridge } from '../engine/net-bridge.ts';
import type { SignalingClient } from './signaling-client.ts';

/** Unordered and unreliable: a late audio frame is useless, so never retransmit or wait for order. */
export const AUDIO_CHANNEL_INIT: RTCDataChannelInit = { ordered: false, maxRetransmits: 0 };

export interface RemoteMember {
  id: string;
  name: string;
  connection: RTCPeerConnectionState;
  /** The audio channel reached the worker and opened. */
  audio: boolean;
}

interface Link {
  pc: RTCPeerConnection;
  pendingCandidates: RTCIceCandidateInit[];
  member: RemoteMember;
}

export class AudioMesh {
  readonly selfId = crypto.randomUUID();
  private readonly links = new Map<string, Link>();
  /** Display names from hellos, kept for peers whose offer arrives after their hello. */
  private readonly names = new Map<string, string>();
  private readonly topic: string;
  onchange: () => void = () => {};

  constructor(
    private readonly signaling: SignalingClient,
    private readonly net: NetBridge,
    readonly room: string,
    private readonly name: string,
    private readonly iceServers: RTCIceServer[],
  ) {
    this.topic = audioTopic(room);
    signaling.onmessage = (topic, data) => {
      if (topic !== this.topic) return;
      const m = parseMeshMessage(data);
      if (m && m.from !== this.selfId && (!('to' in m) || m.to === undefined || m.to === this.selfId)) {
        // A peer's bad SDP or candidate must not break the room for us: drop that peer's link.
        this.onMesh(m).catch(() => this.drop(m.from));
      }
    };
    signaling.onopen = () => this.hello();
    signaling.subscribe(this.topic);
    this.hello();
    net.on('peer-open', (id) => this.update(id, (m) => (m.audio = true)));
    net.on('peer-closed', (id) => this.drop(id));
  }

  members(): RemoteMember[] {
    return [...this.links.values()].map((l) => l.member);
  }

  leave(): void {
    this.publish({ type: 'tutti-bye', from: this.selfId });
    for (const id of [...this.links.keys()]) this.drop(id);
    this.signaling.unsubscribe(this.topic);
  }

  private hello(to?: string): void {
    this.publish({ type: 'tutti-hello', from: this.selfId, name: this.name, ...(to ? { to } : {}) });
  }

  private publish(m: MeshMessage): void {
    this.signaling.publish(this.topic, m);
  }

  private async onMesh(m: MeshMessage): Promise<void> {
    switch (m.type) {
      case 'tutti-hello': {
        this.names.set(m.from, m.name.slice(0, 40));
        const link = this.links.get(m.from);
        if (link) {
          link.member.name = this.names.get(m.from)!;
          this.onchange();
          return;
        }
        // The peer with the smaller id offers; the other answers a broadcast hello so it learns of us.
        if (this.selfId < m.from) await this.offer(m.from);
        else if (m.to === undefined) this.hello(m.from);
        return;
      }
      case 'tutti-signal': {
        let link = this.links.get(m.from);
        if (m.description?.type === 'offer') {
          if (!link) link = this.createLink(m.from);
          await link.pc.setRemoteDescription(m.description);
          await link.pc.setLocalDescription(await link.pc.createAnswer());
          this.sendDescription(m.from, link.pc);
          await this.flushCandidates(link);
        } else if (m.description?.type === 'answer' && link) {
          await link.pc.setRemoteDescription(m.description);
          await this.flushCandidates(link);
        } else if (m.candidate && link) {
          if (link.pc.remoteDescription) await link.pc.addIceCandidate(m.candidate).catch(() => {});
          else link.pendingCandidates.push(m.candidate);
        }
        return;
      }
      case 'tutti-bye':
        this.names.delete(m.from);
        this.drop(m.from);
        return;
      default:
        m satisfies never;
    }
  }

  private async offer(peerId: string): Promise<void> {
    this.hello(peerId); // the answerer may have joined after our broadcast hello: introduce ourselves
    const link = this.createLink(peerId);
    const channel = link.pc.createDataChannel('tutti-audio', AUDIO_CHANNEL_INIT);
    this.net.addPeer(peerId, channel); // transferred before it opens: the page never sees a frame
    await link.pc.setLocalDescription(await link.pc.createOffer());
    this.sendDescription(peerId, link.pc);
  }

  private createLink(peerId: string): Link {
    const pc = new RTCPeerConnection({ iceServers: this.iceServers, iceTransportPolicy: iceTransportPolicyFromSettings() });
    const link: Link = { pc, pendingCandidates: [], member: { id: peerId, name: this.names.get(peerId) ?? 'Guest', connection: pc.connectionState, audio: false } };
    this.links.set(peerId, link);
    pc.onicecandidate = (ev) => {
      this.publish({ type: 'tutti-signal', from: this.selfId, to: peerId, candidate: ev.candidate ? ev.candidate.toJSON() : null });
    };
    pc.ondatachannel = (ev) => {
      if (ev.channel.label === 'tutti-audio') this.net.addPeer(peerId, ev.channel); // answering side: transfer at once
    };
    pc.onconnectionstatechange = () => {
      link.member.connection = pc.connectionState;
      if (pc.connectionState === 'failed' || pc.connectionState === 'closed') this.drop(peerId);
      else this.onchange();
    };
    this.onchange();
    return link;
  }

  private sendDescription(peerId: string, pc: RTCPeerConnection): void {
    const d = pc.localDescription;
    if (d) this.publish({ type: 'tutti-signal', from: this.selfId, to: peerId, description: { type: d.type, sdp: d.sdp } });
  }

  private async flushCandidates(link: Link): Promise<void> {
    for (const c of link.pendingCandidates.splice(0)) await link.pc.addIceCandidate(c).catch(() => {});
  }

  private update(peerId: string, fn: (m: RemoteMember) => void): void {
    const link = this.links.get(peerId);
    if (!link) return;
    fn(link.member);
    this.onchange();
  }

  private drop(peerId: string): void {
    const link = this.links.get(peerId);
    if (!link) return;
    this.links.delete(peerId);
    link.pc.onconnectionstatechange = link.pc.onicecandidate = link.pc.ondatachannel = null;
    link.pc.close();
    this.net.removePeer(peerId);
    this.onchange();
  }
}

/**
 * localStorage `tutti.iceTransportPolicy` = 'relay' sends all media through the TURN servers of
 * `tutti.iceServers` (for users behind strict NATs, and the TURN fault tests); otherwise 'all'.
 */
function iceTransportPolicyFromSettings(): RTCIceTransportPolicy {
  try {
    return localStorage.getItem('tutti.iceTransportPolicy') === 'relay' ? 'relay' : 'all';
  } catch {
    return 'all';
  }
}
