// The network worker: owns every audio RTCDataChannel. Sends each captured quantum the moment
// the capture worklet wakes it (Atomics.waitAsync), and places each received frame in the
// playback worklet's de-jitter ring. Talks to the page only for control and 2 Hz stats.

/// <reference lib="webworker" />
import { QUANTUM_MS, QUANTUM_SAMPLES, clampDepth, DEFAULT_DEPTH, MAX_PEERS } from '../src/shared/constants.ts';
import { CAP_I32, CaptureViews, PEER_I32, PLAY_F32, PlaybackViews, slotOf } from '../src/shared/memory-layout.ts';
import { seqAdd } from '../src/shared/seq.ts';
import {
  FLAG,
  MAX_PACKET_BYTES,
  REJECT_NAMES,
  Reject,
  decodeHeader,
  decodedHash,
  encodePacket,
  newHeader,
  packetBytes,
  payloadHash,
} from '../src/shared/wire.ts';
import type { FromWorker, InitMessage, PeerStats, ToWorker } from '../src/shared/worker-protocol.ts';
import { Arrival, JitterWriter, findFreePeer } from './jitter-writer.ts';
import { LatencyWindow } from './latency-window.ts';
import { Tap } from './tap.ts';

declare const self: DedicatedWorkerGlobalScope & { __tuttiTap?: Tap; __tuttiWorker?: NetWorker };

/** Above this many queued bytes a channel is congested; frames to it are dropped, not queued. */
const MAX_BUFFERED_BYTES = 32 * 1024;
const STATS_INTERVAL_MS = 500;

function nowUs(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

class RemotePeer {
  rejected = 0;
  /** Rejections per Reject code (index), reported by name in stats. */
  readonly rejectedBy = new Uint32Array(Object.keys(REJECT_NAMES).length);
  readonly latency = new LatencyWindow();
  lastReceived = 0;
  constructor(
    readonly id: string,
    readonly channel: RTCDataChannel,
    readonly writer: JitterWriter,
  ) {}
}

class NetWorker {
  private readonly cap: CaptureViews;
  private readonly play: PlaybackViews;
  private readonly peers = new Map<string, RemotePeer>();
  /** The same peers as an array: the per-frame send loop iterates it without allocating. */
  private peerList: RemotePeer[] = [];
  private readonly frame = new Float32Array(QUANTUM_SAMPLES);
  private readonly packet = new Uint8Array(new ArrayBuffer(MAX_PACKET_BYTES));
  private readonly packetView = new DataView(this.packet.buffer);
  /** Views of `packet` for each length encodePacket can return (silent, mono, stereo), made once. */
  private readonly packetOfLength = new Map<number, Uint8Array<ArrayBuffer>>(
    [packetBytes(1, true), packetBytes(1, false), packetBytes(2, false)].map((n) => [n, this.packet.subarray(0, n)]),
  );
  private readonly header = newHeader();
  private readonly tap: Tap | null;
  private channels: 1 | 2;
  private sendMuted = false;
  private depth: number;
  private seq = (Math.random() * 2 ** 32) >>> 0;
  private readonly streamId = 1 + Math.floor(Math.random() * 255);
  private wakeSeen = 0;
  private sent = 0;
  private lastSent = 0;
  private busyMs = 0;
  private lastStatsAt = performance.now();
  private stopped = false;
  private readonly statsTimer: ReturnType<typeof setInterval>;

  constructor(init: Omit<InitMessage, 'type'>) {
    this.cap = new CaptureViews(init.capture);
    this.play = new PlaybackViews(init.playback);
    this.channels = init.channels;
    this.depth = clampDepth(init.depth ?? DEFAULT_DEPTH);
    this.tap = init.test?.tap ? new Tap() : null;
    if (this.tap) {
      this.tap.streamId = this.streamId;
      self.__tuttiTap = this.tap;
    }
    this.wakeSeen = Atomics.load(this.cap.i32, CAP_I32.WAKE);
    this.armWake();
    this.statsTimer = setInterval(() => this.postStats(), STATS_INTERVAL_MS);
  }

  // ---- capture → network -------------------------------------------------------------------

  /** Sleep until the capture worklet bumps WAKE (it calls Atomics.notify after each quantum). */
  private armWake(): void {
    if (this.stopped) return;
    const r = Atomics.waitAsync(this.cap.i32, CAP_I32.WAKE, this.wakeSeen);
    if (r.async) void r.value.then(this.onWake);
    else queueMicrotask(this.onWake); // WAKE already moved on ('not-equal'): drain now
  }

  private readonly onWake = (): void => {
    this.wakeSeen = Atomics.load(this.cap.i32, CAP_I32.WAKE);
    const t0 = performance.now();
    this.drainCapture();
    this.busyMs += performance.now() - t0;
    this.armWake();
  };

  private drainCapture(): void {
    const ring = this.cap.ring;
    let backlog = Math.floor(ring.available_read() / QUANTUM_SAMPLES);
    if (backlog === 0) return;
    const now = nowUs();
    while (backlog > 0) {
      if (ring.pop(this.frame, QUANTUM_SAMPLES) !== QUANTUM_SAMPLES) break;
      backlog--;
      // The newest quantum was captured about now; older ones one quantum apart before it.
      const captureUs = now - Math.round(backlog * QUANTUM_MS * 1000);
      this.sendFrame(captureUs);
    }
  }

  private sendFrame(captureUs: number): void {
    if (this.sendMuted) this.frame.fill(0);
    const len = encodePacket(this.packet, this.packetView, this.frame, this.channels, this.streamId, this.seq, captureUs);
    const bytes = this.packetOfLength.get(len)!;
    const peers = this.peerList;
    for (let i = 0; i < peers.length; i++) {
      const ch = peers[i]!.channel;
      if (ch.readyState === 'open' && ch.bufferedAmount <= MAX_BUFFERED_BYTES) ch.send(bytes);
    }
    if (this.tap) {
      this.tap.sent.record(this.seq, payloadHash(this.packet, len));
      const sig = this.tap.sentSignal;
      for (let f = 0; f < 128; f++) sig[this.tap.sentSignalLength++ % sig.length] = this.frame[2 * f]!;
    }
    this.seq = seqAdd(this.seq, 1);
    this.sent++;
  }

  // ---- network → playback ------------------------------------------------------------------

  addPeer(peerId: string, channel: RTCDataChannel): void {
    if (this.peers.has(peerId)) this.removePeer(peerId, 'replaced');
    const slot = findFreePeer(this.play, MAX_PEERS);
    if (slot < 0) {
      channel.close();
      post({ type: 'error', message: `Room is full: this device mixes at most ${MAX_PEERS} peers.` });
      return;
    }
    const peer = new RemotePeer(peerId, channel, new JitterWriter(this.play, slot, this.depth));
    channel.binaryType = 'arraybuffer';
    channel.onopen = () => post({ type: 'peer-open', peerId });
    channel.onclose = () => this.removePeer(peerId, 'channel closed');
    channel.onerror = () => {}; // a close follows; the reason is reported there
    channel.onmessage = (ev: MessageEvent) => this.onPacket(peer, ev.data);
    this.peers.set(peerId, peer);
    this.peerList = [...this.peers.values()];
    if (channel.readyState === 'open') post({ type: 'peer-open', peerId });
  }

  removePeer(peerId: string, reason: string): void {
    const peer = this.peers.get(peerId);
    if (!peer) return;
    this.peers.delete(peerId);
    this.peerList = [...this.peers.values()];
    peer.channel.onopen = peer.channel.onclose = peer.channel.onmessage = peer.channel.onerror = null;
    if (peer.channel.readyState !== 'closed') peer.channel.close();
    peer.writer.release();
    post({ type: 'peer-closed', peerId, reason });
  }

  private onPacket(peer: RemotePeer, data: unknown): void {
    const t0 = performance.now();
    try {
      if (!(data instanceof ArrayBuffer)) {
        this.reject(peer, Reject.NOT_BINARY);
        return;
      }
      // The browser hands every message over in a fresh ArrayBuffer; this view is the only JS object
      // we add per packet. Decoding writes straight into the shared de-jitter slot.
      const view = new DataView(data);
      const h = this.header;
      const why = decodeHeader(view, h);
      if (why !== Reject.OK) {
        this.reject(peer, why);
        return;
      }
      const arrival = peer.writer.accept(h, view);
      if (arrival === Arrival.ON_TIME || arrival === Arrival.RESYNC) {
        const transitUs = (nowUs() - h.captureTimeUs) | 0; // both clocks are wall clocks; wraps at 2^32 µs
        peer.latency.add(transitUs / 1000 + peer.writer.lastAhead * QUANTUM_MS);
        if (this.tap) {
          const offset = this.play.samples(peer.writer.peer, slotOf(h.sequence));
          this.tap.log(peer.id).record(h.sequence, decodedHash(this.play.f32, offset, h.channels, (h.flags & FLAG.SILENT) !== 0));
        }
      }
    } catch (err) {
      // Never let one packet take the worker's event loop down.
      this.reject(peer, Reject.INTERNAL);
      post({ type: 'error', message: `packet handling failed: ${String(err)}` });
    } finally {
      this.busyMs += performance.now() - t0;
    }
  }

  private reject(peer: RemotePeer, why: Reject): void {
    peer.rejected++;
    peer.rejectedBy[why]!++;
  }

  // ---- control -----------------------------------------------------------------------------

  setDepth(depth: number): void {
    this.depth = clampDepth(depth);
    for (const p of this.peers.values()) p.writer.setDepth(this.depth);
  }

  setPeerMix(peerId: string, gain: number, muted: boolean): void {
    const p = this.peers.get(peerId);
    if (!p) return;
    p.writer.setGain(gain);
    p.writer.setMuted(muted);
  }

  setSend(channels: 1 | 2, muted: boolean): void {
    this.channels = channels;
    this.sendMuted = muted;
  }

  setMasterGain(gain: number): void {
    this.play.f32[PLAY_F32.MASTER_GAIN] = Math.min(4, Math.max(0, gain));
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.statsTimer);
    for (const id of [...this.peers.keys()]) this.removePeer(id, 'stopped');
  }

  /** Diagnostic snapshot (read by tests through worker.evaluate): owned peers and slot states. */
  debugState(): { peers: string[]; channelStates: string[]; slotStates: number[] } {
    const slotStates: number[] = [];
    for (let p = 0; p < MAX_PEERS; p++) slotStates.push(Atomics.load(this.play.i32, this.play.peerI32(p, PEER_I32.STATE)));
    return { peers: [...this.peers.keys()], channelStates: [...this.peers.values()].map((p) => p.channel.readyState), slotStates };
  }

  private postStats(): void {
    const now = performance.now();
    const seconds = (now - this.lastStatsAt) / 1000;
    this.lastStatsAt = now;
    const peers: PeerStats[] = [];
    for (const p of this.peers.values()) {
      const w = p.writer;
      const c = w.counters;
      const missed = w.playCounter(PEER_I32.MISSED);
      peers.push({
        peerId: p.id,
        slot: w.peer,
        channelState: p.channel.readyState,
        received: c.received,
        late: c.late,
        // A missed playout slot is either a frame that came late or one that never came.
        // (Stragglers of a replaced stream are counted `stale`, not late, so they do not hide losses.)
        lost: Math.max(0, missed - c.late),
        stale: c.stale,
        duplicates: c.duplicates,
        rejected: p.rejected,
        rejectedBy: Object.fromEntries([...p.rejectedBy].flatMap((n, code) => (n > 0 ? [[REJECT_NAMES[code as Reject], n]] : []))),
        resyncs: c.resyncs,
        played: w.playCounter(PEER_I32.PLAYED),
        missed,
        depth: w.playCounter(PEER_I32.DEPTH),
        latencyMs: p.latency.summary(),
        framesPerSecond: Math.round((c.received - p.lastReceived) / seconds),
      });
      p.lastReceived = c.received;
      p.latency.reset();
    }
    post({
      type: 'stats',
      sent: this.sent,
      sendFramesPerSecond: Math.round((this.sent - this.lastSent) / seconds),
      captureOverflows: Atomics.load(this.cap.i32, CAP_I32.OVERFLOWS),
      workerCpuMsPerSecond: Math.round((this.busyMs / seconds) * 100) / 100,
      peers,
    });
    this.lastSent = this.sent;
    this.busyMs = 0;
  }
}

function post(msg: FromWorker): void {
  self.postMessage(msg);
}

let worker: NetWorker | null = null;

self.onmessage = (ev: MessageEvent<ToWorker>) => {
  const msg = ev.data;
  if (msg.type !== 'init' && !worker) {
    post({ type: 'error', message: `'${msg.type}' before init` });
    return;
  }
  switch (msg.type) {
    case 'init':
      worker = new NetWorker(msg);
      self.__tuttiWorker = worker;
      post({ type: 'ready', wake: 'waitAsync' });
      break;
    case 'add-peer':
      worker!.addPeer(msg.peerId, msg.channel);
      break;
    case 'remove-peer':
      worker!.removePeer(msg.peerId, 'removed by page');
      break;
    case 'set-peer-mix':
      worker!.setPeerMix(msg.peerId, msg.gain, msg.muted);
      break;
    case 'set-depth':
      worker!.setDepth(msg.depth);
      break;
    case 'set-send':
      worker!.setSend(msg.channels, msg.muted);
      break;
    case 'set-master-gain':
      worker!.setMasterGain(msg.gain);
      break;
    case 'stop':
      worker!.stop();
      worker = null;
      break;
    default:
      msg satisfies never;
  }
};
