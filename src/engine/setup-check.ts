// The pre-join check (main thread): a loopback through two RTCPeerConnections inside this page,
// negotiated locally (no server), that runs the whole audio chain: capture worklet → worker →
// DataChannel → worker → playback worklet, in both directions. Both playback slots are muted so the
// user does not hear themselves; the worker still measures. Plus the signaling round trip.

import type { PeerStats, StatsMessage } from '../shared/worker-protocol.ts';
import { AUDIO_CHANNEL_INIT, AUDIO_CHANNEL_LABEL } from '../shared/audio-channel.ts';
import { framesExpected } from '../shared/peer-counts.ts';
import { WIRE_VERSION } from '../shared/wire.ts';
import type { AudioEngine } from './audio-engine.ts';
import { median } from '../shared/median.ts';
import { measureSignalingRtt, type SignalingRtt } from './signaling-rtt.ts';

export const LOOPBACK_PEERS = ['loopback-a', 'loopback-b'] as const;

export interface SetupCheckResult {
  /** Frames per second received, the slower of the two directions, averaged over the window (375 = every frame). */
  framesPerSecond: number;
  /** Late and lost frames over the window, % of frames expected. */
  latePercent: number;
  lostPercent: number;
  /** Added latency, capture → playout (both workers, the DataChannel, the jitter buffer; no device I/O), ms. */
  latencyMs: { p50: number; p99: number } | null;
  /** Jitter-buffer target the worker used, quanta. */
  depth: number;
  /** DataChannel round trip, median over the window, ms. */
  rttMs: number | null;
  seconds: number;
  /** Round trip to the signaling server, or why it failed. */
  signaling: SignalingRtt | { error: string };
}

export interface SetupCheckOptions {
  signalUrl: string;
  /** Measurement window after both directions flow, s. */
  seconds?: number;
  /** How long the local connection may take to carry audio, ms. */
  openTimeoutMs?: number;
  onProgress?: (message: string) => void;
}

/** Run the check on a started engine; leaves the engine without the loopback peers (the caller stops it). */
export async function runSetupCheck(engine: AudioEngine, opts: SetupCheckOptions): Promise<SetupCheckResult> {
  const progress = opts.onProgress ?? (() => {});
  const seconds = opts.seconds ?? 5;
  progress('Timing the signaling server…');
  const signaling = await measureSignalingRtt(opts.signalUrl).catch((err: unknown) => ({ error: err instanceof Error ? err.message : String(err) }));

  progress('Connecting a local loopback…');
  const pcA = new RTCPeerConnection();
  const pcB = new RTCPeerConnection();
  const net = engine.net;
  try {
    pcA.onicecandidate = (e) => void (e.candidate && pcB.addIceCandidate(e.candidate).catch(() => {}));
    pcB.onicecandidate = (e) => void (e.candidate && pcA.addIceCandidate(e.candidate).catch(() => {}));
    pcB.ondatachannel = (e) => {
      if (e.channel.label !== AUDIO_CHANNEL_LABEL) return;
      net.addPeer(LOOPBACK_PEERS[1], e.channel, WIRE_VERSION); // transferred inside ondatachannel, as in the mesh
      net.setPeerMix(LOOPBACK_PEERS[1], 0, true);
    };
    const channel = pcA.createDataChannel(AUDIO_CHANNEL_LABEL, AUDIO_CHANNEL_INIT);
    net.addPeer(LOOPBACK_PEERS[0], channel, WIRE_VERSION); // transferred right after creation
    net.setPeerMix(LOOPBACK_PEERS[0], 0, true);
    await pcA.setLocalDescription();
    await pcB.setRemoteDescription(pcA.localDescription!);
    await pcB.setLocalDescription();
    await pcA.setRemoteDescription(pcB.localDescription!);

    const flowing = (m: StatsMessage): boolean => LOOPBACK_PEERS.every((id) => m.peers.some((p) => p.peerId === id && p.channelState === 'open' && p.framesPerSecond > 0));
    await nextStats(engine, flowing, opts.openTimeoutMs ?? 15_000, 'The local loopback connection carried no audio: WebRTC may be blocked in this browser.');
    progress(`Measuring for ${seconds} s…`);
    const start = engine.stats.latest()!;
    let end = start;
    const window: StatsMessage[] = [];
    const t0 = performance.now();
    while (performance.now() - t0 < seconds * 1000) {
      end = await nextStats(engine, () => true, 5000, 'The network worker stopped reporting stats.');
      window.push(end);
    }
    return summarise(start, end, window, seconds, signaling);
  } finally {
    for (const id of LOOPBACK_PEERS) net.removePeer(id);
    pcA.close();
    pcB.close();
  }
}

function summarise(start: StatsMessage, end: StatsMessage, window: StatsMessage[], seconds: number, signaling: SetupCheckResult['signaling']): SetupCheckResult {
  const per = (m: StatsMessage, id: string): PeerStats | undefined => m.peers.find((p) => p.peerId === id);
  let late = 0;
  let lost = 0;
  let expected = 0;
  const fps: number[] = [];
  const p50s: number[] = [];
  const p99s: number[] = [];
  const rtts: number[] = [];
  for (const id of LOOPBACK_PEERS) {
    const a = per(start, id);
    const b = per(end, id);
    if (!a || !b) throw new Error(`the loopback peer ${id} closed during the check`);
    late += b.late - a.late;
    lost += b.lost - a.lost;
    expected += framesExpected(b) - framesExpected(a);
    const samples = window.flatMap((m) => (per(m, id) ? [per(m, id)!] : []));
    fps.push(samples.reduce((sum, p) => sum + p.framesPerSecond, 0) / Math.max(1, samples.length));
    for (const p of samples) {
      if (p.latencyMs) {
        p50s.push(p.latencyMs.p50);
        p99s.push(p.latencyMs.p99);
      }
      if (p.rttMs !== null) rtts.push(p.rttMs);
    }
  }
  return {
    framesPerSecond: Math.min(...fps),
    latePercent: expected > 0 ? (100 * late) / expected : 0,
    lostPercent: expected > 0 ? (100 * lost) / expected : 0,
    latencyMs: p50s.length ? { p50: median(p50s), p99: Math.max(...p99s) } : null,
    depth: Math.max(...LOOPBACK_PEERS.map((id) => per(end, id)!.fill.target)),
    rttMs: rtts.length ? median(rtts) : null,
    seconds,
    signaling,
  };
}

/** The next stats message satisfying `ok`, or an error after `timeoutMs`. */
function nextStats(engine: AudioEngine, ok: (m: StatsMessage) => boolean, timeoutMs: number, timeoutMessage: string): Promise<StatsMessage> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(timeoutMessage));
    }, timeoutMs);
    const off = engine.stats.subscribe(() => {
      const m = engine.stats.latest()!;
      if (!ok(m)) return;
      clearTimeout(timer);
      off();
      resolve(m);
    });
  });
}
