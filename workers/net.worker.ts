// The network worker's entry: owns every audio RTCDataChannel. The sender (sender.ts) sends each
// captured quantum the moment it is captured, the receiver (receiver.ts) places each received frame
// in the playback worklet's de-jitter ring; this file keeps the peers (remote-peer.ts), steers each
// one's depth and playout rate at 10 Hz, pings once a second, and talks to the page only for
// control and 1 Hz stats (peer-stats.ts).

/// <reference lib="webworker" />
import type { InputChannels } from '../src/shared/input-channels.ts';
import { DEFAULT_DEPTH, MAX_PEERS, QUANTUM_FRAMES, QUANTUM_MS, SAMPLE_RATE, STALL_STEP_QUANTA, clampDepth } from '../src/shared/constants.ts';
import { CAP_I32, CaptureViews, HEARD_F64, HEARD_I32, HeardViews, MetronomeViews, PEER_I32, PLAY_F32, PLAY_I32, PlaybackViews, type HeardMemory, type RecordMemory } from '../src/shared/memory-layout.ts';
import type { MetronomeState } from '../src/shared/metronome.ts';
import { ControlKind, VERSION_CLOCK, VERSION_ONE_WAY, type QuantaPerPacket, type SendBits } from '../src/shared/wire.ts';
import type { ClockRefMessage, FromWorker, InitMessage, OutputDropouts, OutputStalls, PeerClosedReason, PeerStats, SharedClockStats, TestOptions, ToWorker } from '../src/shared/worker-protocol.ts';
import { ArrivalTrace } from './arrival-stats.ts';
import { ASK_FAST_EVERY_MS, SharedClock, askEveryMs, type ClockCheck } from './clock-sync.ts';
import { DepthController } from './depth-controller.ts';
import { JitterWriter, findFreePeer } from './jitter-writer.ts';
import { MetronomeSchedule } from './metronome-schedule.ts';
import { takePeerStats } from './peer-stats.ts';
import { Receiver } from './receiver.ts';
import { RemotePeer, nowMs, nowUs } from './remote-peer.ts';
import { Sender } from './sender.ts';
import { OutputClock } from './shown-drift.ts';
import { SpeakerTime } from './speaker-time.ts';
import { Tap } from './test-tap.ts';

declare const self: DedicatedWorkerGlobalScope & { __tuttiTap?: Tap; __tuttiWorker?: NetWorker };

const STATS_INTERVAL_MS = 1000;
/** The depth controller runs at 10 Hz. */
const CONTROL_INTERVAL_MS = 100;
/** Channel round-trip pings, and loopback impulses, once a second. */
const PING_INTERVAL_MS = 1000;
/** The shared clock's timer: each peer is asked at its own rate (clock-sync.ts askEveryMs: 20 or 4 a second). */
const CLOCK_INTERVAL_MS = ASK_FAST_EVERY_MS;
/** The drift fit's output-clock readings: one in each 240 ms (about four a second of the page's twenty). */
const OUTPUT_FIT_EVERY_MS = 240;
/** The metronome's schedule is republished 20 times a second (the worklet extrapolates between). */
const METRONOME_INTERVAL_MS = 50;

class NetWorker {
  private readonly cap: CaptureViews;
  private readonly play: PlaybackViews;
  private readonly peers = new Map<string, RemotePeer>();
  /** The same peers as an array: the per-frame loops iterate it without allocating. */
  private peerList: RemotePeer[] = [];
  private readonly sender: Sender;
  private readonly receiver: Receiver;
  /** Our output device's clock, from the page's readings (the drift shown is against it). */
  private readonly output = new OutputClock();
  /** When our playback reaches the speaker, from the same readings (the one-way delay is dated by it). */
  private readonly speaker = new SpeakerTime();
  /** When the drift fit last took a reading (wall ms). */
  private outputFitAt = -Infinity;
  /** Our output device's dropouts as the page last read them (OutputClockMessage), for the stats. */
  private outputDropouts: OutputDropouts | null = null;
  /** Our output's stalls so far (StatsMessage.outputStalls); written only by stalled(). */
  private readonly outputStalls: OutputStalls = { count: 0, lostMs: 0 };
  /** The heard ring's control block of the take being recorded, or null. */
  private heard: HeardViews | null = null;
  private depth: number;
  private adaptive: boolean;
  private lastSent = 0;
  private lastPackets = 0;
  private lastStatsAt = performance.now();
  private readonly timers: ReturnType<typeof setInterval>[];
  /**
   * Our clock for the shared clock's exchanges, ms since the epoch (a test switch may skew it), at
   * a reading of the wall clock (performance.timeOrigin + now()). A figure that needs both clocks
   * takes one reading and derives ours from it: two reads apart let a preemption of this worker
   * between them (5–12 ms on a loaded machine) into the figure, and the metronome clicked that late.
   */
  private readonly ownAt: (wallMs: number) => number;
  /** The room's shared clock, from our side. */
  private readonly shared = new SharedClock();
  /** What the page last said the room follows (a peer may be named before its channel is here). */
  private clockRef: Exclude<ClockRefMessage['ref'], { kind: 'succeed' }> = { kind: 'hold' };
  /** Test build: acting as an app from before the shared clock (the wireV1 switch) asks no clocks. */
  private readonly asksClocks: boolean;
  /** The room's metronome at our speaker. */
  private readonly metronome: MetronomeSchedule;
  /** Leader mode: the leader we follow (its one-way reports set our advance); null otherwise. */
  private leaderPeerId: string | null = null;

  constructor(init: Omit<InitMessage, 'type'>) {
    this.cap = new CaptureViews(init.capture);
    this.play = new PlaybackViews(init.playback);
    this.depth = clampDepth(init.depth ?? DEFAULT_DEPTH);
    this.adaptive = init.adaptive;
    const streamId = 1 + Math.floor(Math.random() * 255);
    // Test build only: the switches of init.test and a Tap. A production worker ignores init.test
    // whoever sends it (the switches change what the room hears), and every use is behind
    // `__TUTTI_TEST__`, so none of it is in the bundle.
    const test: TestOptions = __TUTTI_TEST__ ? (init.test ?? {}) : {};
    const tap = __TUTTI_TEST__ && test.tap ? new Tap(streamId) : null;
    if (__TUTTI_TEST__ && tap) self.__tuttiTap = tap;
    this.ownAt = skewedClock(test.clockOffsetMs ?? 0, test.clockPpm ?? 0);
    this.asksClocks = !(__TUTTI_TEST__ && test.wireV1);
    this.sender = new Sender(this.cap, init.channels, init.redundancy, streamId, test, tap, (reason) => post({ type: 'capture-ended', reason }), () => post({ type: 'capture-switched' }));
    this.receiver = new Receiver(this.play, streamId, post, tap, this.speaker, test, () => this.clockNow());
    this.metronome = new MetronomeSchedule(new MetronomeViews(init.metronome));
    if (__TUTTI_TEST__ && test.playOnBeat) this.sender.beatAt = (startMs) => this.metronome.beatInQuantum(startMs);
    this.timers = [
      setInterval(() => this.scheduleMetronome(), METRONOME_INTERVAL_MS),
      setInterval(() => this.postStats(), STATS_INTERVAL_MS),
      setInterval(() => this.steer(), CONTROL_INTERVAL_MS),
      setInterval(() => this.ping(), PING_INTERVAL_MS),
      setInterval(() => this.askClocks(), CLOCK_INTERVAL_MS),
    ];
  }

  setCaptureSource(readable: ReadableStream<AudioData>): void {
    this.sender.setCaptureSource(readable);
  }
  /** A take starts (its input ring and heard control block) or stops (nulls). */
  record(input: RecordMemory | null, heard: HeardMemory | null): void {
    this.sender.setRecordInput(input);
    this.heard = heard ? new HeardViews(heard) : null;
  }

  /**
   * While a take records: once the playback worklet has pushed its first heard record, date that
   * render at the speaker, so the recorder can line the heard tracks up with the input.
   */
  private dateHeard(): void {
    const h = this.heard;
    if (!h || Atomics.load(h.i32, HEARD_I32.SPEAKER_KNOWN) === 1 || Atomics.load(h.i32, HEARD_I32.STARTED) !== 1) return;
    const now = nowMs();
    const wall = this.speaker.wallOf(Atomics.load(h.i32, HEARD_I32.FIRST_FRAME), now);
    if (wall === null) return;
    h.f64[HEARD_F64.FIRST_SPEAKER_MS] = wall;
    Atomics.store(h.i32, HEARD_I32.SPEAKER_KNOWN, 1);
  }
  setInputChannels(channels: InputChannels): void {
    this.sender.setInputChannels(channels);
  }


  outputClock(contextTime: number, wallMs: number, dropouts: OutputDropouts | null): void {
    this.outputDropouts = dropouts;
    // The drift fit takes four readings a second, as it was tuned with (workers/shown-drift.ts);
    // the speaker dating takes all twenty, to follow a step of the output within about 0.2 s.
    const fit = !(wallMs - this.outputFitAt < OUTPUT_FIT_EVERY_MS);
    if (fit) this.outputFitAt = wallMs;
    // The latency this reading claims: when the next render reaches the speaker by it, less now
    // (the drift fit leaves out a second whose claim is off the usual one: a misdated reading).
    const rendered = Atomics.load(this.play.i32, PLAY_I32.QUANTA);
    const next = this.play.nextRenderFrame(rendered);
    const claimedMs = (((next - Math.round(contextTime * SAMPLE_RATE)) | 0) * 1000) / SAMPLE_RATE + wallMs - nowMs();
    this.output.add(contextTime, wallMs, claimedMs, fit);
    const steps = this.speaker.steps;
    this.speaker.add(contextTime, wallMs);
    if (__TUTTI_TEST__) self.__tuttiTap?.onOutputClock(contextTime, wallMs, this.speaker.offsetMs, rendered);
    if (this.speaker.steps !== steps) {
      // A one-quantum step reads 2.6-2.7 ms: rounded, not floored.
      const lost = Math.round(this.speaker.lastStepMs / QUANTUM_MS);
      if (lost >= STALL_STEP_QUANTA) this.stalled(lost, this.speaker.lastStepMs);
    }
  }

  /**
   * Our output plays `lostQuanta` later than it was due: this machine stalled (its audio thread
   * stopped), or the device dropped a quantum, and each peer's audio that kept arriving piled up in
   * its playout. Trim that backlog now (a stall of 25-50 ms otherwise kept its whole delay for
   * ~0.34 s, or seconds when it sat just under the sustained rule's excess; STALL_STEP_QUANTA), and
   * leave the step out of the one-way reports.
   */
  private stalled(lostQuanta: number, lostMs: number): void {
    const now = performance.now();
    this.outputStalls.count++;
    this.outputStalls.lostMs += lostMs;
    for (const p of this.peerList) {
      p.writer.trimNow(lostQuanta);
      p.oneWayReports.hold(now);
      if (__TUTTI_TEST__) p.lastTrimAsked = lostQuanta;
    }
  }

  // ---- peers -----------------------------------------------------------------------------------

  addPeer(peerId: string, channel: RTCDataChannel, wire: number, track: number, micSinceMs = NaN): void {
    if (this.peers.has(peerId)) this.removePeer(peerId, 'replaced');
    const slot = findFreePeer(this.play, MAX_PEERS);
    if (slot < 0) {
      channel.close();
      post({ type: 'error', message: `Room is full: this device mixes at most ${MAX_PEERS} peers.` });
      return;
    }
    const controller = new DepthController(this.depth, this.adaptive);
    controller.micSinceMs = micSinceMs;
    const peer = new RemotePeer(peerId, channel, new JitterWriter(this.play, slot, controller.target, 1, track), controller, wire);
    channel.binaryType = 'arraybuffer';
    channel.onopen = () => post({ type: 'peer-open', peerId });
    channel.onclose = () => this.removePeer(peerId, 'channel closed');
    channel.onerror = () => {}; // a close follows; the reason is reported there
    channel.onmessage = (ev: MessageEvent) => this.receiver.onPacket(peer, ev.data);
    this.peers.set(peerId, peer);
    this.listChanged();
    this.resolveClockRef();
    if (channel.readyState === 'open') post({ type: 'peer-open', peerId });
  }

  removePeer(peerId: string, reason: PeerClosedReason): void {
    const peer = this.peers.get(peerId);
    if (!peer) return;
    this.peers.delete(peerId);
    this.listChanged();
    this.resolveClockRef();
    peer.channel.onopen = peer.channel.onclose = peer.channel.onmessage = peer.channel.onerror = null;
    if (peer.channel.readyState !== 'closed') peer.channel.close();
    if (this.peerList.every((p) => !p.loopback)) this.sender.injectMarker = false;
    peer.writer.release();
    post({ type: 'peer-closed', peerId, reason });
  }

  private listChanged(): void {
    this.peerList = [...this.peers.values()];
    this.sender.peers = this.peerList;
  }

  // ---- steering and pings ---------------------------------------------------------------------

  /** 10 Hz: each peer's depth controller sets its target depth and playout rate. */
  private steer(): void {
    const now = performance.now();
    this.dateHeard();
    for (const p of this.peerList) {
      const w = p.writer;
      if (w.counters.resyncs !== p.lastResyncs) {
        p.lastResyncs = w.counters.resyncs;
        p.controller.reset();
      }
      let lows = '';
      for (let low = w.nextFillWindow(); low !== null; low = w.nextFillWindow()) {
        p.controller.onWindow(low / QUANTUM_FRAMES, w.windowTrimmed);
        if (__TUTTI_TEST__ && self.__tuttiTap) lows += (lows ? '/' : '') + (low / QUANTUM_FRAMES).toFixed(1);
      }
      p.controller.update(now, w.counters.late + w.playCounter(PEER_I32.UNDERRUNS));
      if (p.controller.target !== w.depthTarget) w.setDepth(p.controller.target);
      w.setRate(p.controller.rate);
      w.setTrimAbove(p.controller.trimAbove());
      w.setSustainedAbove(p.controller.sustainedAbove());
      if (__TUTTI_TEST__ && self.__tuttiTap) {
        self.__tuttiTap.onSteer(p.id, [performance.timeOrigin + now, lows, w.playCounter(PEER_I32.TRIMMED), w.playCounter(PEER_I32.UNDERRUNS), w.playCounter(PEER_I32.MISSED), +p.controller.rate.toFixed(4), p.controller.target, p.lastTrimAsked]);
        p.lastTrimAsked = 0;
      }
      if (p.wire >= VERSION_ONE_WAY) this.receiver.sendOneWay(p);
    }
  }

  /** 1 Hz: ping every peer (channel RTT), and inject a loopback marker if any peer echoes for us. */
  private ping(): void {
    const t = nowUs() >>> 0;
    let inject = false;
    for (const p of this.peerList) {
      p.pingId = (p.pingId + 1) >>> 0;
      this.receiver.sendControl(p, ControlKind.PING, p.pingId, t);
      if (p.loopback) inject = true;
    }
    if (inject) this.sender.injectMarker = true;
  }

  /** 20 Hz: ask the clock of every peer whose turn it is (those whose app answers: wire ≥ 3). */
  private askClocks(): void {
    if (!this.asksClocks) return;
    const now = performance.now();
    for (const p of this.peerList) {
      if (p.wire < VERSION_CLOCK) continue;
      // A timer tick may come a little early: 5 ms of slack keeps four a second from becoming three.
      const due = Number.isNaN(p.clockAskedAt) || now - p.clockAskedAt >= askEveryMs(now - p.clockFirstAskAt) - 5;
      if (!due) continue;
      if (!this.receiver.sendClockRequest(p)) continue;
      if (Number.isNaN(p.clockFirstAskAt)) p.clockFirstAskAt = now;
      p.clockAskedAt = now;
    }
  }

  /**
   * The room's metronome (null: none) and our advance (leader mode), from the page, with the
   * leader's peer id while we follow one (its reports on the audio channel then set the advance).
   */
  setMetronome(state: MetronomeState | null, advanceMs: number, leaderPeerId: string | null): void {
    this.metronome.set(state, advanceMs);
    this.leaderPeerId = leaderPeerId;
    this.scheduleMetronome();
  }

  /** 20 Hz, and at each change: the metronome's next beats at our speaker. */
  private scheduleMetronome(): void {
    // One reading of the wall clock for both clocks (see ownAt).
    const wall = nowMs();
    const own = this.ownAt(wall);
    // Leader mode: the leader's latest report of our one-way delay, if fresh (else the page's).
    const leader = this.leaderPeerId === null ? undefined : this.peers.get(this.leaderPeerId);
    const reported = leader ? leader.oneWayReports.theirs(performance.now()) : null;
    this.metronome.tick({ ownMs: own, wallMs: wall, sharedOffsetMs: this.shared.offsetAt(own) }, this.speaker, reported);
  }

  /** The page says whose clock the room follows (src/room/shared-clock.ts). */
  setClockRef(ref: ClockRefMessage['ref']): void {
    if (ref.kind === 'succeed') {
      // Our base is the shared clock we had at this very instant minus our clock (the page's
      // copy from the stats is up to a second old: against a clock 300 ppm off, 0.3 ms of step).
      const baseMs = this.shared.offsetAt(this.clockNow()) ?? 0;
      this.clockRef = { kind: 'self', baseMs };
      this.resolveClockRef();
      post({ type: 'clock-base', baseMs });
      return;
    }
    this.clockRef = ref;
    this.resolveClockRef();
  }

  /** Point the shared clock at the reference's PeerClock once its channel is here; hold until then. */
  private resolveClockRef(): void {
    const r = this.clockRef;
    const peer = r.kind === 'peer' ? this.peers.get(r.peerId) : undefined;
    this.shared.ref = r.kind === 'self' ? r : peer && r.kind === 'peer' ? { kind: 'peer', peer: peer.clock, baseMs: r.baseMs } : { kind: 'hold' };
  }

  /** Our clock now (see ownAt). */
  private clockNow(): number {
    return this.ownAt(nowMs());
  }

  private clockStats(): SharedClockStats {
    const wall = nowMs(); // one reading for both clocks (see ownAt)
    const own = this.ownAt(wall);
    const offset = this.shared.offsetAt(own);
    const error = this.shared.errorMs;
    const kind = this.shared.ref.kind;
    return {
      sharedMinusWallMs: offset === null ? null : own + offset - wall,
      ref: kind,
      refPeerId: kind === 'peer' && this.clockRef.kind === 'peer' ? this.clockRef.peerId : null,
      offsetMs: offset === null ? null : Math.round(offset * 1000) / 1000,
      errorMs: error === null ? null : Math.round(error * 1000) / 1000,
    };
  }

  /**
   * Test build only: the shared clock and our (possibly skewed) clock, each minus this process's
   * unskewed clock, ms, and our estimate of each peer's clock minus ours at the same instant.
   * Every process on one machine shares that clock, so the tests compare these figures across
   * browsers (null in production). (The stats' estimates are up to a second old by the time a test
   * reads them: against a clock 300 ppm off, 0.3 ms of the error would be the test's own.)
   */
  clockCheck(): ClockCheck | null {
    if (!__TUTTI_TEST__) return null;
    // One reading of the machine's clock, ours derived from it (see ownAt): no preemption between two reads in any figure.
    const host = nowMs();
    const mine = this.ownAt(host);
    const offset = this.shared.offsetAt(mine);
    const peers: Record<string, number | null> = {};
    const estimates: ClockCheck['estimates'] = {};
    for (const [id, p] of this.peers) {
      peers[id] = p.clock.offsetAt(mine);
      const e = p.clock.estimate;
      estimates[id] = e && { errorMs: e.errorMs, driftPpm: e.driftPpm, samples: e.samples, spanS: p.clock.spanMs() / 1000, anchorAgeS: (mine - e.atMs) / 1000 };
    }
    return { sharedMinusHostMs: offset === null ? null : mine + offset - host, ownMinusHostMs: mine - host, peers, estimates };
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
    this.sender.setRedundancy(frames);
  }

  setLoopback(peerId: string, enabled: boolean): void {
    const p = this.peers.get(peerId);
    if (!p) return;
    p.loopback = enabled;
    p.markerSeq = -1;
    if (!enabled) p.loopbackRttMs = null;
    this.receiver.sendControl(p, enabled ? ControlKind.ECHO_ON : ControlKind.ECHO_OFF, 0, 0);
  }

  setTrace(enabled: boolean): void {
    this.receiver.trace = enabled ? new ArrivalTrace() : this.receiver.trace?.stop() ?? null;
  }

  sendTrace(): void {
    const t = this.receiver.trace;
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

  setSend(channels: 1 | 2, muted: boolean, bits: SendBits, perPacket: QuantaPerPacket): void {
    this.sender.setSend(channels, muted, bits, perPacket);
  }

  setMasterGain(gain: number): void {
    this.play.f32[PLAY_F32.MASTER_GAIN] = Math.min(4, Math.max(0, gain));
  }

  stop(): void {
    this.sender.stop();
    for (const t of this.timers) clearInterval(t);
    for (const id of [...this.peers.keys()]) this.removePeer(id, 'stopped');
  }

  /** Diagnostic snapshot (read by tests through worker.evaluate): owned peers and slot states. */
  debugState(): { peers: string[]; channelStates: string[]; slotStates: number[] } {
    const slotStates: number[] = [];
    for (let p = 0; p < MAX_PEERS; p++) slotStates.push(Atomics.load(this.play.i32, this.play.peerI32(p, PEER_I32.STATE)));
    return { peers: [...this.peers.keys()], channelStates: [...this.peers.values()].map((p) => p.channel.readyState), slotStates };
  }

  // ---- stats -----------------------------------------------------------------------------------

  /** 1 Hz, before the stats: each link's redundancy from its congestion in the last second. */
  private govern(now: number): void {
    const frames = this.sender.redundancyFrames;
    for (const p of this.peerList) {
      const congested = p.sendDropped !== p.sendDroppedSeen;
      p.sendDroppedSeen = p.sendDropped;
      p.governor.tick(now, congested, frames);
      p.copies = p.governor.copies(frames);
      p.mono = p.governor.mono;
    }
  }

  private postStats(): void {
    const now = performance.now();
    this.govern(now);
    const seconds = (now - this.lastStatsAt) / 1000;
    this.lastStatsAt = now;
    const s = this.sender;
    const peers: PeerStats[] = [];
    const clockNow = this.clockNow();
    for (const p of this.peers.values()) peers.push(takePeerStats(p, seconds, s.channels === 2, s.format, this.output, clockNow));
    post({
      type: 'stats',
      sent: s.sent,
      sendFramesPerSecond: Math.round((s.sent - this.lastSent) / seconds),
      sendPacketsPerSecond: Math.round((s.packets - this.lastPackets) / seconds),
      perPacket: s.quantaPerPacket,
      captureOverflows: Atomics.load(this.cap.i32, CAP_I32.OVERFLOWS),
      captureLostFrames: this.sender.capturedLost,
      workerCpuMsPerSecond: Math.round(((s.busyMs + this.receiver.busyMs) / seconds) * 100) / 100,
      kbpsOut: this.peerList.length ? Math.round((s.bytesOut * 8) / this.peerList.length / seconds / 1000) : 0,
      redundancy: s.redundancyFrames,
      adaptive: this.adaptive,
      traceFrames: this.receiver.trace?.length ?? 0,
      output: this.outputDropouts,
      outputStalls: { count: this.outputStalls.count, lostMs: Math.round(this.outputStalls.lostMs * 10) / 10 },
      clock: this.clockStats(),
      metronome: this.metronome.status,
      peers,
    });
    this.lastSent = s.sent;
    this.lastPackets = s.packets;
    s.bytesOut = 0;
    s.busyMs = 0;
    this.receiver.busyMs = 0;
  }
}

/** Our clock at wall time `t` (ms since the epoch); in the test build skewed by `offsetMs` and `ppm` when asked. */
function skewedClock(offsetMs: number, ppm: number): (t: number) => number {
  if (!__TUTTI_TEST__ || (offsetMs === 0 && ppm === 0)) return (t) => t;
  const start = nowMs();
  return (t) => t + offsetMs + ppm * 1e-6 * (t - start);
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
      worker!.addPeer(msg.peerId, msg.channel, msg.wire, msg.track, msg.micSinceMs ?? NaN);
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
      worker!.setSend(msg.channels, msg.muted, msg.bits, msg.perPacket);
      break;
    case 'set-master-gain':
      worker!.setMasterGain(msg.gain);
      break;
    case 'capture-source':
      worker!.setCaptureSource(msg.readable);
      break;
    case 'set-input-channels':
      worker!.setInputChannels(msg.channels);
      break;
    case 'record':
      worker!.record(msg.input, msg.heard);
      break;
    case 'clock-ref':
      worker!.setClockRef(msg.ref);
      break;
    case 'set-metronome':
      worker!.setMetronome(msg.state, msg.advanceMs, msg.leaderPeerId);
      break;
    case 'output-clock':
      worker!.outputClock(msg.contextTime, msg.wallMs, msg.dropouts);
      break;
    case 'stop':
      worker!.stop();
      worker = null;
      break;
    default:
      msg satisfies never;
  }
};
