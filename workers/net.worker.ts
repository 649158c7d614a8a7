// The network worker: owns every audio RTCDataChannel. Sends each captured quantum the moment
// the capture worklet wakes it (Atomics.waitAsync), places each received frame in the playback
// worklet's de-jitter ring, and steers each peer's depth and playout rate. Talks to the page only
// for control and 1 Hz stats.

/// <reference lib="webworker" />
import {
  DEFAULT_DEPTH,
  LOOPBACK_MARKER,
  MAX_PEERS,
  METER_DECAY_PER_QUANTUM,
  MAX_REDUNDANCY,
  QUANTUM_FRAMES,
  QUANTUM_MS,
  QUANTUM_SAMPLES,
  clampDepth,
} from '../src/shared/constants.ts';
import { CAP_F32, CAP_I32, CaptureViews, PEER_I32, PLAY_F32, PLAY_I32, PlaybackViews, slotOf } from '../src/shared/memory-layout.ts';
import { seqAdd } from '../src/shared/seq.ts';
import {
  ControlKind,
  FLAG,
  HEADER,
  MAX_PACKET_BYTES,
  REJECT_NAMES,
  RedundancyHistory,
  Reject,
  decodeHeader,
  encodeControl,
  encodePacket,
  floatToPcm16,
  newHeader,
  packetBytes,
  quantumBytes,
  type PacketHeader,
} from '../src/shared/wire.ts';
import type { FromWorker, InitMessage, PeerClosedReason, PeerStats, TestOptions, ToWorker } from '../src/shared/worker-protocol.ts';
import { DepthController } from './depth-controller.ts';
import { Arrival, JitterWriter, findFreePeer } from './jitter-writer.ts';
import { LatencyWindow } from './latency-window.ts';
import { ArrivalTrace, IfdvWindow } from './arrival-stats.ts';
import { TestClockSkew } from './test-clock-skew.ts';
import { SendGovernor } from './send-governor.ts';
import { MAX_QUEUE_MS, SendQueue } from './send-queue.ts';
import { TrackCapture } from './track-capture.ts';
import { Tap } from './test-tap.ts';

declare const self: DedicatedWorkerGlobalScope & { __tuttiTap?: Tap; __tuttiWorker?: NetWorker };

const STATS_INTERVAL_MS = 1000;
/** The depth controller runs at 10 Hz. */
const CONTROL_INTERVAL_MS = 100;
/** Channel round-trip pings, and loopback impulses, once a second. */
const PING_INTERVAL_MS = 1000;
/** PCM16 values of the loopback marker, as they come back in an echoed packet. */
const MARKER_PCM = LOOPBACK_MARKER.map(floatToPcm16);

function nowUs(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

class RemotePeer {
  rejected = 0;
  /** Rejections per Reject code (index), reported by name in stats. */
  readonly rejectedBy = new Uint32Array(Object.keys(REJECT_NAMES).length);
  readonly latency = new LatencyWindow();
  readonly ifdv = new IfdvWindow();
  lastReceived = 0;
  bytesIn = 0;
  lastResyncs = 0;
  /** The peer asked us to echo its audio back (peer loopback at their end). */
  echo = false;
  /** We asked the peer to echo ours, and inject a marker every second. */
  loopback = false;
  markerSeq = -1;
  markerUs = 0;
  loopbackRttMs: number | null = null;
  rttMs: number | null = null;
  pingId = 0;
  /** When each packet to this peer was handed over: the age of its channel's backlog. */
  readonly queue = new SendQueue();
  /** Frames not sent to this peer because its channel was congested (its backlog older than MAX_QUEUE_MS). */
  sendDropped = 0;
  /** sendDropped at the last governor tick. */
  sendDroppedSeen = 0;
  /** Redundant copies this link can afford (lowered while it is congested). */
  readonly governor = new SendGovernor(performance.now());
  /** Redundant copies sent to this peer now (the governor's level and the room setting). */
  copies = MAX_REDUNDANCY;
  /** This peer gets a mono mixdown without copies (its link is congested even so). */
  mono = false;
  constructor(
    readonly id: string,
    readonly channel: RTCDataChannel,
    readonly writer: JitterWriter,
    readonly controller: DepthController,
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
  /** Views of `packet` for each length encodePacket can return (silent; mono or stereo with 0..3 redundant quanta), made once. */
  private readonly packetOfLength = new Map<number, Uint8Array<ArrayBuffer>>(
    [packetBytes(1, true), ...[0, 1, 2, 3].flatMap((r) => [packetBytes(1, false, r), packetBytes(2, false, r)])].map((n) => [n, this.packet.subarray(0, n)]),
  );
  /** The same frame as a mono packet without copies, for congested peers of a stereo sender (encoded only when one needs it). */
  private readonly monoPacket = new Uint8Array(new ArrayBuffer(packetBytes(1, false)));
  private readonly monoView = new DataView(this.monoPacket.buffer);
  private readonly monoSilent = this.monoPacket.subarray(0, packetBytes(1, true));
  private readonly control = new Uint8Array(new ArrayBuffer(16));
  private readonly controlView = new DataView(this.control.buffer);
  private readonly header = newHeader();
  private readonly redundancy = new RedundancyHistory();
  /** Test build only: the switches of init.test, a Tap and a TestClockSkew. In production these
   * stay empty and every use below is behind `__TUTTI_TEST__`, so none of it is in the bundle. */
  private readonly tap: Tap | null;
  private readonly test: TestOptions;
  private readonly clockSkew: TestClockSkew | null;
  private trace: ArrivalTrace | null = null;
  /** The microphone read straight from its track (the normal path); the capture ring is the fallback. */
  private readonly track = new TrackCapture({
    onQuantum: (frame, captureUs) => {
      const t0 = performance.now();
      this.frame.set(frame);
      this.sendCaptured(captureUs);
      this.busyMs += performance.now() - t0;
    },
    onEnd: (reason) => post({ type: 'error', message: reason }),
  });
  /** ping() asks for a loopback marker in the next quantum sent (a peer echoes for us). */
  private injectMarker = false;
  private inputPeak = 0;
  private channels: 1 | 2;
  private sendMuted = false;
  private depth: number;
  private adaptive: boolean;
  private bytesOut = 0;
  private seq = (Math.random() * 2 ** 32) >>> 0;
  private readonly streamId = 1 + Math.floor(Math.random() * 255);
  private wakeSeen = 0;
  private sent = 0;
  private lastSent = 0;
  private busyMs = 0;
  private lastStatsAt = performance.now();
  private stopped = false;
  private readonly timers: ReturnType<typeof setInterval>[];

  constructor(init: Omit<InitMessage, 'type'>) {
    this.cap = new CaptureViews(init.capture);
    this.play = new PlaybackViews(init.playback);
    this.channels = init.channels;
    this.depth = clampDepth(init.depth ?? DEFAULT_DEPTH);
    this.adaptive = init.adaptive;
    this.redundancy.frames = Math.max(0, Math.min(MAX_REDUNDANCY, Math.round(init.redundancy)));
    // A production worker ignores init.test whoever sends it: the switches change what the room hears.
    this.test = __TUTTI_TEST__ ? (init.test ?? {}) : {};
    this.clockSkew = __TUTTI_TEST__ && this.test.captureRatio && this.test.captureRatio !== 1 ? new TestClockSkew(this.test.captureRatio) : null;
    this.tap = __TUTTI_TEST__ && this.test.tap ? new Tap(this.streamId) : null;
    if (__TUTTI_TEST__ && this.tap) self.__tuttiTap = this.tap;
    this.wakeSeen = Atomics.load(this.cap.i32, CAP_I32.WAKE);
    this.armWake();
    this.timers = [
      setInterval(() => this.postStats(), STATS_INTERVAL_MS),
      setInterval(() => this.steer(), CONTROL_INTERVAL_MS),
      setInterval(() => this.ping(), PING_INTERVAL_MS),
    ];
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
      this.sendCaptured(captureUs);
    }
  }

  /** Replace the microphone's stream (MediaStreamTrackProcessor.readable, transferred by the page). */
  setCaptureSource(readable: ReadableStream<AudioData>): void {
    this.track.start(readable);
  }

  /**
   * A captured quantum is in `frame`, from either path: apply the input gain, meter it, stamp the
   * loopback marker if one is due, and send it.
   */
  private sendCaptured(captureUs: number): void {
    const frame = this.frame;
    const gain = this.cap.f32[CAP_F32.INPUT_GAIN]!;
    let peak = 0;
    for (let i = 0; i < frame.length; i++) {
      const x = frame[i]! * gain;
      frame[i] = x;
      const a = x > 0 ? x : -x;
      if (a > peak) peak = a;
    }
    this.inputPeak = Math.max(peak, this.inputPeak * METER_DECAY_PER_QUANTUM);
    this.cap.f32[CAP_F32.PEAK] = this.inputPeak;
    if (__TUTTI_TEST__ && this.clockSkew) {
      // Test option: pretend our clock runs at captureRatio × ours (more or fewer frames).
      this.clockSkew.push(frame);
      while (this.clockSkew.pull(frame)) this.sendFrame(captureUs);
    } else {
      this.sendFrame(captureUs);
    }
  }

  private sendFrame(captureUs: number): void {
    if (this.sendMuted) this.frame.fill(0);
    const peers = this.peerList;
    if (this.injectMarker && !this.sendMuted) {
      // Peer loopback: this quantum starts with the marker; the peer's echo of it gives the round trip.
      this.injectMarker = false;
      for (let f = 0; f < LOOPBACK_MARKER.length; f++) this.frame[2 * f] = this.frame[2 * f + 1] = LOOPBACK_MARKER[f]!;
      for (let i = 0; i < peers.length; i++) {
        const p = peers[i]!;
        if (p.loopback) {
          p.markerSeq = this.seq;
          p.markerUs = captureUs;
        }
      }
    }
    const len = encodePacket(this.packet, this.packetView, this.frame, this.channels, this.streamId, this.seq, captureUs, this.redundancy);
    const flags = this.packet[HEADER.FLAGS]!;
    const extra = (flags & FLAG.REDUNDANCY_MASK) >> FLAG.REDUNDANCY_SHIFT;
    const dropped = __TUTTI_TEST__ && this.test.dropEvery !== undefined && this.test.dropEvery >= 2 && this.seq % this.test.dropEvery === 0;
    let monoLen = 0;
    const sendMs = performance.now();
    for (let i = 0; i < peers.length; i++) {
      const p = peers[i]!;
      const ch = p.channel;
      if (dropped || ch.readyState !== 'open') continue;
      let bytes: Uint8Array<ArrayBuffer>;
      if (p.mono && this.channels === 2) {
        // The bottom of the governor's ladder: this frame mixed down to mono, no copies.
        if (monoLen === 0) monoLen = encodePacket(this.monoPacket, this.monoView, this.frame, 1, this.streamId, this.seq, captureUs);
        bytes = monoLen === this.monoPacket.length ? this.monoPacket : this.monoSilent;
      } else {
        // A peer whose link cannot afford all the copies gets a prefix of the packet: the same
        // header with fewer copies announced, the current quantum and the newest copies.
        const copies = extra > p.copies ? p.copies : extra;
        this.packet[HEADER.FLAGS] = (flags & ~FLAG.REDUNDANCY_MASK) | (copies << FLAG.REDUNDANCY_SHIFT);
        bytes = this.packetOfLength.get(copies === extra ? len : HEADER.SIZE + (1 + copies) * quantumBytes(this.channels))!;
      }
      const n = bytes.length;
      if (p.queue.ageMs(sendMs, ch.bufferedAmount) > MAX_QUEUE_MS) {
        p.sendDropped++; // congested: drop rather than queue (it would only arrive late)
        this.packet[HEADER.FLAGS] = flags;
        continue;
      }
      if (__TUTTI_TEST__ && (this.test.delayMs || this.test.jitterMs)) {
        // Test option: a fixed plus a random delay per packet (allocates; test build only).
        const copy = bytes.slice();
        setTimeout(() => ch.readyState === 'open' && ch.send(copy), (this.test.delayMs ?? 0) + Math.random() * (this.test.jitterMs ?? 0));
      } else {
        ch.send(bytes);
      }
      p.queue.record(sendMs, n);
      this.packet[HEADER.FLAGS] = flags;
      this.bytesOut += n;
    }
    if (__TUTTI_TEST__ && this.tap) this.tap.onSent(this.seq, this.packet, len, this.channels, this.frame);
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
    const controller = new DepthController(this.depth, this.adaptive);
    const peer = new RemotePeer(peerId, channel, new JitterWriter(this.play, slot, controller.target), controller);
    channel.binaryType = 'arraybuffer';
    channel.onopen = () => post({ type: 'peer-open', peerId });
    channel.onclose = () => this.removePeer(peerId, 'channel closed');
    channel.onerror = () => {}; // a close follows; the reason is reported there
    channel.onmessage = (ev: MessageEvent) => this.onPacket(peer, ev.data);
    this.peers.set(peerId, peer);
    this.peerList = [...this.peers.values()];
    if (channel.readyState === 'open') post({ type: 'peer-open', peerId });
  }

  removePeer(peerId: string, reason: PeerClosedReason): void {
    const peer = this.peers.get(peerId);
    if (!peer) return;
    this.peers.delete(peerId);
    this.peerList = [...this.peers.values()];
    peer.channel.onopen = peer.channel.onclose = peer.channel.onmessage = peer.channel.onerror = null;
    if (peer.channel.readyState !== 'closed') peer.channel.close();
    if (this.peerList.every((p) => !p.loopback)) this.injectMarker = false;
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
      peer.bytesIn += view.byteLength;
      if ((h.flags & FLAG.CONTROL) !== 0) {
        this.onControl(peer, h);
        return;
      }
      if ((h.flags & FLAG.ECHOED) !== 0) {
        this.onEcho(peer, h, view);
        return;
      }
      if (peer.echo && peer.channel.readyState === 'open') {
        // Peer loopback at the other end's request: send its packet straight back, marked.
        new Uint8Array(data)[HEADER.FLAGS] = h.flags | FLAG.ECHOED;
        peer.channel.send(data);
      }
      const arrival = peer.writer.accept(h, view);
      const arrivalMs = performance.timeOrigin + performance.now();
      if (arrival === Arrival.RESYNC) peer.controller.reset();
      if (arrival === Arrival.ON_TIME || arrival === Arrival.RESYNC || arrival === Arrival.LATE) peer.controller.onArrival(h.sequence, Atomics.load(this.play.i32, PLAY_I32.QUANTA));
      if (arrival === Arrival.ON_TIME || arrival === Arrival.RESYNC) {
        const transitUs = (nowUs() - h.captureTimeUs) | 0; // both clocks are wall clocks; wraps at 2^32 µs
        const margin = peer.writer.lastMarginFrames / QUANTUM_FRAMES;
        peer.latency.add(transitUs / 1000 + margin * QUANTUM_MS);
        peer.ifdv.add(h.sequence, arrivalMs, h.captureTimeUs / 1000);
      }
      if (this.trace) this.trace.add(peer.id, h.sequence, arrivalMs, h.captureTimeUs / 1000);
      if (arrival === Arrival.ON_TIME || arrival === Arrival.RESYNC) {
        if (__TUTTI_TEST__ && this.tap) {
          const offset = this.play.samples(peer.writer.peer, slotOf(h.sequence));
          this.tap.onDecoded(peer.id, h.sequence, this.play.f32, offset, h.channels, (h.flags & FLAG.SILENT) !== 0);
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

  private sendControl(peer: RemotePeer, kind: ControlKind, id: number, time: number): void {
    if (peer.channel.readyState !== 'open') return;
    const n = encodeControl(this.controlView, kind, id, time);
    peer.channel.send(this.control.subarray(0, n));
  }

  private onControl(peer: RemotePeer, h: PacketHeader): void {
    switch (h.control) {
      case ControlKind.PING:
        this.sendControl(peer, ControlKind.PONG, h.controlId, h.controlTime);
        return;
      case ControlKind.PONG:
        if (h.controlId === peer.pingId) peer.rttMs = (((nowUs() >>> 0) - h.controlTime) >>> 0) / 1000;
        return;
      case ControlKind.ECHO_ON:
        peer.echo = true;
        return;
      case ControlKind.ECHO_OFF:
        peer.echo = false;
        return;
    }
  }

  /** One of our own packets, echoed by the peer: look for the loopback marker in it. */
  private onEcho(peer: RemotePeer, h: PacketHeader, view: DataView): void {
    if (!peer.loopback || h.streamId !== this.streamId || h.sequence !== peer.markerSeq) return;
    if ((h.flags & FLAG.SILENT) !== 0) return;
    const stride = h.channels * 2;
    for (let f = 0; f < MARKER_PCM.length; f++) {
      if (view.getInt16(HEADER.SIZE + f * stride, true) !== MARKER_PCM[f]) return;
    }
    peer.loopbackRttMs = Math.round(((nowUs() - peer.markerUs) / 1000) * 100) / 100;
    peer.markerSeq = -1;
  }

  /** 10 Hz: each peer's depth controller sets its target depth and playout rate. */
  private steer(): void {
    const now = performance.now();
    for (const p of this.peerList) {
      const w = p.writer;
      if (w.counters.resyncs !== p.lastResyncs) {
        p.lastResyncs = w.counters.resyncs;
        p.controller.reset();
      }
      for (let low = w.nextFillWindow(); low !== null; low = w.nextFillWindow()) p.controller.onWindow(low / QUANTUM_FRAMES, w.windowTrimmed);
      p.controller.update(now, w.counters.late + w.playCounter(PEER_I32.UNDERRUNS));
      if (p.controller.target !== w.depthTarget) w.setDepth(p.controller.target);
      w.setRate(p.controller.rate);
      w.setTrimAbove(p.controller.trimAbove());
    }
  }

  /** 1 Hz: ping every peer (channel RTT), and inject a loopback marker if any peer echoes for us. */
  private ping(): void {
    const t = nowUs() >>> 0;
    let inject = false;
    for (const p of this.peerList) {
      p.pingId = (p.pingId + 1) >>> 0;
      this.sendControl(p, ControlKind.PING, p.pingId, t);
      if (p.loopback) inject = true;
    }
    if (inject) this.injectMarker = true;
  }

  // ---- control -----------------------------------------------------------------------------

  setDepth(depth: number, adaptive: boolean): void {
    this.depth = clampDepth(depth);
    this.adaptive = adaptive;
    for (const p of this.peers.values()) {
      p.controller.setDepth(this.depth, adaptive);
      p.writer.setDepth(p.controller.target);
    }
  }

  setRedundancy(frames: number): void {
    this.redundancy.frames = Math.max(0, Math.min(MAX_REDUNDANCY, Math.round(frames)));
  }

  setLoopback(peerId: string, enabled: boolean): void {
    const p = this.peers.get(peerId);
    if (!p) return;
    p.loopback = enabled;
    p.markerSeq = -1;
    if (!enabled) p.loopbackRttMs = null;
    this.sendControl(p, enabled ? ControlKind.ECHO_ON : ControlKind.ECHO_OFF, 0, 0);
  }

  setTrace(enabled: boolean): void {
    this.trace = enabled ? new ArrivalTrace() : this.trace?.stop() ?? null;
  }

  sendTrace(): void {
    const t = this.trace;
    if (!t) {
      post({ type: 'trace', peers: [], peer: new Uint8Array(0), seq: new Uint32Array(0), arrivalMs: new Float64Array(0), captureMs: new Float64Array(0) });
      return;
    }
    const m = t.snapshot();
    self.postMessage({ type: 'trace', ...m } satisfies FromWorker, [m.peer.buffer, m.seq.buffer, m.arrivalMs.buffer, m.captureMs.buffer]);
  }

  setPeerMix(peerId: string, gain: number, muted: boolean): void {
    const p = this.peers.get(peerId);
    if (!p) return;
    p.writer.setGain(gain);
    p.writer.setMuted(muted);
  }

  setSend(channels: 1 | 2, muted: boolean): void {
    if (channels !== this.channels) this.redundancy.reset();
    this.channels = channels;
    this.sendMuted = muted;
  }

  setMasterGain(gain: number): void {
    this.play.f32[PLAY_F32.MASTER_GAIN] = Math.min(4, Math.max(0, gain));
  }

  stop(): void {
    this.stopped = true;
    this.track.stop();
    for (const t of this.timers) clearInterval(t);
    for (const id of [...this.peers.keys()]) this.removePeer(id, 'stopped');
  }

  /** Diagnostic snapshot (read by tests through worker.evaluate): owned peers and slot states. */
  debugState(): { peers: string[]; channelStates: string[]; slotStates: number[] } {
    const slotStates: number[] = [];
    for (let p = 0; p < MAX_PEERS; p++) slotStates.push(Atomics.load(this.play.i32, this.play.peerI32(p, PEER_I32.STATE)));
    return { peers: [...this.peers.keys()], channelStates: [...this.peers.values()].map((p) => p.channel.readyState), slotStates };
  }

  /** 1 Hz, before the stats: each link's redundancy from its congestion in the last second. */
  private govern(now: number): void {
    for (const p of this.peerList) {
      const congested = p.sendDropped !== p.sendDroppedSeen;
      p.sendDroppedSeen = p.sendDropped;
      p.governor.tick(now, congested, this.redundancy.frames);
      p.copies = p.governor.copies(this.redundancy.frames);
      p.mono = p.governor.mono;
    }
  }

  private postStats(): void {
    const now = performance.now();
    this.govern(now);
    const seconds = (now - this.lastStatsAt) / 1000;
    this.lastStatsAt = now;
    const peers: PeerStats[] = [];
    for (const p of this.peers.values()) {
      const w = p.writer;
      const c = w.counters;
      const missed = w.playCounter(PEER_I32.MISSED);
      const lost = Math.max(0, missed - c.late);
      const expected = Math.max(1, c.received + c.recovered + c.late + lost);
      const pct = (n: number) => Math.round((n / expected) * 100_000) / 1000;
      const fill = p.controller.fill(23); // ≈ the last second of 43 ms windows
      const drift = p.controller.shownDrift();
      peers.push({
        peerId: p.id,
        slot: w.peer,
        channelState: p.channel.readyState,
        received: c.received,
        late: c.late,
        // A missed playout slot is either a frame that came late or one that never came.
        // (Stragglers of a replaced stream are counted `stale`, not late, so they do not hide losses.)
        lost,
        stale: c.stale,
        duplicates: c.duplicates,
        rejected: p.rejected,
        rejectedBy: Object.fromEntries([...p.rejectedBy].flatMap((n, code) => (n > 0 ? [[REJECT_NAMES[code as Reject], n]] : []))),
        resyncs: c.resyncs,
        played: w.playCounter(PEER_I32.PLAYED),
        missed,
        concealed: w.playCounter(PEER_I32.CONCEALED),
        recovered: c.recovered,
        underruns: w.playCounter(PEER_I32.UNDERRUNS),
        trimmed: w.playCounter(PEER_I32.TRIMMED),
        depth: p.controller.target,
        fill: { avg: round2(fill.avg), min: round2(fill.min), held: round2(p.controller.held()), target: p.controller.target },
        percent: { late: pct(c.late), lost: pct(lost), duplicates: pct(c.duplicates), rejected: pct(p.rejected) },
        rttMs: p.rttMs,
        ifdvMs: p.ifdv.summary(),
        kbpsIn: Math.round((p.bytesIn * 8) / seconds / 1000),
        driftPpm: drift.ppm,
        driftSeconds: drift.seconds,
        rate: Math.round(p.controller.rate * 1e6) / 1e6,
        bufferedAmount: p.channel.readyState === 'open' ? p.channel.bufferedAmount : 0,
        sendDropped: p.sendDropped,
        sendRedundancy: p.copies,
        sendMono: p.mono && this.channels === 2,
        loopbackRttMs: p.loopback ? p.loopbackRttMs : null,
        latencyMs: p.latency.summary(),
        framesPerSecond: Math.round((c.received + c.recovered - p.lastReceived) / seconds),
      });
      p.lastReceived = c.received + c.recovered;
      p.bytesIn = 0;
      p.latency.reset();
      p.ifdv.reset();
    }
    post({
      type: 'stats',
      sent: this.sent,
      sendFramesPerSecond: Math.round((this.sent - this.lastSent) / seconds),
      captureOverflows: Atomics.load(this.cap.i32, CAP_I32.OVERFLOWS),
      workerCpuMsPerSecond: Math.round((this.busyMs / seconds) * 100) / 100,
      kbpsOut: this.peerList.length ? Math.round((this.bytesOut * 8) / this.peerList.length / seconds / 1000) : 0,
      redundancy: this.redundancy.frames,
      adaptive: this.adaptive,
      traceFrames: this.trace?.length ?? 0,
      peers,
    });
    this.lastSent = this.sent;
    this.bytesOut = 0;
    this.busyMs = 0;
  }
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
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
      if (__TUTTI_TEST__) self.__tuttiWorker = worker; // debugState() for the tests; no global in production
      post({ type: 'ready' });
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
      worker!.setDepth(msg.depth, msg.adaptive);
      break;
    case 'set-redundancy':
      worker!.setRedundancy(msg.frames);
      break;
    case 'set-loopback':
      worker!.setLoopback(msg.peerId, msg.enabled);
      break;
    case 'set-trace':
      worker!.setTrace(msg.enabled);
      break;
    case 'get-trace':
      worker!.sendTrace();
      break;
    case 'set-send':
      worker!.setSend(msg.channels, msg.muted);
      break;
    case 'set-master-gain':
      worker!.setMasterGain(msg.gain);
      break;
    case 'capture-source':
      worker!.setCaptureSource(msg.readable);
      break;
    case 'stop':
      worker!.stop();
      worker = null;
      break;
    default:
      msg satisfies never;
  }
};
