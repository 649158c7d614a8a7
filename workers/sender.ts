// Network worker, outgoing: takes each captured quantum (from the microphone's track, or from the
// capture worklet's ring when it wakes us with Atomics.notify), applies the input gain, meters it,
// encodes it once and hands it to every peer's channel: each peer gets the copies its link can
// afford, a mono mixdown at the bottom of the governor's ladder, or nothing while its channel's
// backlog is too old to play in time. Allocation-free per frame (test options aside).

import type { InputChannels } from '../src/shared/input-channels.ts';
import { LOOPBACK_MARKER, MAX_REDUNDANCY, METER_DECAY_PER_QUANTUM, QUANTUM_MS, QUANTUM_SAMPLES } from '../src/shared/constants.ts';
import { CAP_F32, CAP_I32, type CaptureViews } from '../src/shared/memory-layout.ts';
import { seqAdd } from '../src/shared/seq.ts';
import { FLAG, HEADER, MAX_PACKET_BYTES, RedundancyHistory, encodePacket, packetBytes, quantumBytes } from '../src/shared/wire.ts';
import type { TestOptions } from '../src/shared/worker-protocol.ts';
import { nowUs, type RemotePeer } from './remote-peer.ts';
import { MAX_QUEUE_MS } from './send-queue.ts';
import { TestClockSkew } from './test-clock-skew.ts';
import type { Tap } from './test-tap.ts';
import { TrackCapture } from './track-capture.ts';

export class Sender {
  /** The peers to send to (the network worker replaces the array when one comes or goes). */
  peers: readonly RemotePeer[] = [];
  /** ping() asks for a loopback marker in the next quantum sent (a peer echoes for us). */
  injectMarker = false;
  channels: 1 | 2;
  /** Frames sent since the start, and bytes since the last stats. */
  sent = 0;
  bytesOut = 0;
  /** Time spent sending since the last stats, ms. */
  busyMs = 0;
  readonly redundancy = new RedundancyHistory();
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
  /** Test build only (see net.worker.ts): null or empty in production. */
  private readonly clockSkew: TestClockSkew | null;
  /** The microphone read straight from its track (the normal path); the capture ring is the fallback. */
  private readonly track: TrackCapture;
  private inputPeak = 0;
  private muted = false;
  private seq = (Math.random() * 2 ** 32) >>> 0;
  private wakeSeen: number;
  private stopped = false;

  constructor(
    private readonly cap: CaptureViews,
    channels: 1 | 2,
    redundancy: number,
    readonly streamId: number,
    private readonly test: TestOptions,
    private readonly tap: Tap | null,
    onCaptureEnd: (reason: string) => void,
    /** A new microphone source took over (the page may stop the old track). */
    onCaptureSwitched: () => void = () => {},
  ) {
    this.channels = channels;
    this.setRedundancy(redundancy);
    this.clockSkew = __TUTTI_TEST__ && test.captureRatio && test.captureRatio !== 1 ? new TestClockSkew(test.captureRatio) : null;
    this.track = new TrackCapture({
      onQuantum: (frame, captureUs) => {
        const t0 = performance.now();
        this.frame.set(frame);
        this.sendCaptured(captureUs);
        this.busyMs += performance.now() - t0;
      },
      onEnd: onCaptureEnd,
      onSwitched: onCaptureSwitched,
    });
    this.wakeSeen = Atomics.load(cap.i32, CAP_I32.WAKE);
    this.armWake();
  }

  /** Replace the microphone's stream (MediaStreamTrackProcessor.readable, transferred by the page). */
/** Which input channels the microphone's track gives us (the worklet path captures both). */
  setInputChannels(channels: InputChannels): void {
    this.track.channels = channels;
  }

    setCaptureSource(readable: ReadableStream<AudioData>): void {
    this.track.start(readable);
  }

  setRedundancy(frames: number): void {
    this.redundancy.frames = Math.max(0, Math.min(MAX_REDUNDANCY, Math.round(frames)));
  }

  setSend(channels: 1 | 2, muted: boolean): void {
    if (channels !== this.channels) this.redundancy.reset();
    this.channels = channels;
    this.muted = muted;
  }

  stop(): void {
    this.stopped = true;
    this.track.stop();
  }

  // ---- the capture ring (fallback path) ------------------------------------------------------

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

  // ---- one quantum out -----------------------------------------------------------------------

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
    if (this.muted) this.frame.fill(0);
    const peers = this.peers;
    if (this.injectMarker && !this.muted) {
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
}
