// Network worker, outgoing: takes each captured quantum (from the microphone's track, or from the
// capture worklet's ring when it wakes us with Atomics.notify), applies the input gain, meters it,
// encodes it once per format some peer needs (our choice of PCM16 or PCM24; PCM16 also for a peer
// whose app predates PCM24) and hands it to every peer's channel: each peer gets the copies its
// link can afford, a PCM16 mono mixdown at the bottom of the governor's ladder, or nothing while
// its channel's backlog is too old to play in time. With two quanta per packet (the player's choice
// for a busy computer) it sends every other quantum, each packet carrying the one before as its
// first copy: half the packets, 2.67 ms later for the first of each pair; receivers take the copy
// as they take any redundant copy (jitter-writer.ts, recover), so no peer needs to know.
// Allocation-free per frame (test options aside).

import type { InputChannels } from '../src/shared/input-channels.ts';
import { LOOPBACK_MARKER, MAX_REDUNDANCY, METER_DECAY_PER_QUANTUM, QUANTUM_FRAMES, QUANTUM_MS, QUANTUM_SAMPLES } from '../src/shared/constants.ts';
import { CAP_F32, CAP_I32, REC_F64, REC_I32, RecordViews, type CaptureViews, type RecordMemory } from '../src/shared/memory-layout.ts';
import { seqAdd } from '../src/shared/seq.ts';
import { SampleFormat, VERSION_PCM24, formatOfBits, type QuantaPerPacket, type SendBits } from '../src/shared/wire.ts';
import type { TestOptions } from '../src/shared/worker-protocol.ts';
import { nowUs, type RemotePeer } from './remote-peer.ts';
import { StreamEncoder } from './stream-encoder.ts';
import { TestClockSkew } from './test-clock-skew.ts';
import type { Tap } from './test-tap.ts';
import { TrackCapture, type LossCause } from './track-capture.ts';

export class Sender {
  /** The peers to send to (the network worker replaces the array when one comes or goes). */
  peers: readonly RemotePeer[] = [];
  /** ping() asks for a loopback marker in the next quantum sent (a peer echoes for us). */
  injectMarker = false;
  /**
   * Test build, switch playOnBeat: for the quantum captured from wall time `startMs`, the frame at
   * which a metronome beat reaches our speaker, or −1 (workers/metronome-schedule.ts). Null otherwise.
   */
  beatAt: ((startMs: number) => number) | null = null;
  channels: 1 | 2;
  /** Frames sent since the start, packets (send rounds: one per quantum, or per two) too, and bytes since the last stats. */
  sent = 0;
  packets = 0;
  bytesOut = 0;
  /** Time spent sending since the last stats, ms. */
  busyMs = 0;
  /** Our sample format (the player's choice of 16 or 24 bits). */
  format: SampleFormat = SampleFormat.PCM16;
  /** The stream in each format: PCM24 when chosen, PCM16 when chosen or some peer decodes nothing else. */
  private readonly pcm16 = new StreamEncoder(SampleFormat.PCM16);
  private readonly pcm24 = new StreamEncoder(SampleFormat.PCM24);
  private readonly frame = new Float32Array(QUANTUM_SAMPLES);
  /** The stream as PCM16 mono, for congested peers of a stereo sender (encoded only while one needs it): no copies, but the pair's when two quanta go per packet. */
  private readonly mono16 = new StreamEncoder(SampleFormat.PCM16);
  /** Quanta per packet: 1, or 2 (every other quantum, with the one before as the first copy). */
  private perPacket: QuantaPerPacket = 1;
  /** The room's redundancy setting (copies of earlier packets each one carries). */
  private redundancy = 0;
  /** Test build only (see net.worker.ts): null or empty in production. */
  private readonly clockSkew: TestClockSkew | null;
  /** The microphone read straight from its track (the normal path); the capture ring is the fallback. */
  private readonly track: TrackCapture;
  /** The record ring of the take being recorded (our input, dry), or null. */
  private record: RecordViews | null = null;
  /** Frames the microphone's stream lost since the start (track-capture.ts onLost). */
  capturedLost = 0;
  private readonly silence = new Float32Array(QUANTUM_SAMPLES);
  private recordStarted = false;
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
      onLost: (frames, cause) => this.inputLost(frames, cause),
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

  /**
   * The microphone's stream lost `frames` frames (track-capture.ts). Counted; a take records that
   * much silence (and a gap), so its input track keeps time with the clock and with the heard
   * tracks. (The quantum being assembled when the loss showed holds up to 127 frames from before
   * it, which land after the silence: the take is off by under 2.7 ms within the gap, exact after.)
   */
  private inputLost(frames: number, cause: LossCause): void {
    this.capturedLost += frames;
    const rec = this.record;
    if (!rec || !this.recordStarted) return;
    const silence = this.silence;
    for (let left = frames; left > 0; left -= QUANTUM_FRAMES) {
      const n = Math.min(QUANTUM_FRAMES, left) * 2;
      if (rec.ring.available_write() >= n) rec.ring.push(silence, n);
      else Atomics.add(rec.i32, REC_I32.OVERFLOWS, 1);
    }
    if (cause === 'device') Atomics.add(rec.i32, REC_I32.PAUSED_FRAMES, frames);
    Atomics.add(rec.i32, REC_I32.LOST_FRAMES, frames);
  }

  /** Start (a take's record memory) or stop (null) pushing our dry input into a record ring. */
  setRecordInput(memory: RecordMemory | null): void {
    // A take stopping: a loss the capture has begun to see goes into it before it ends.
    if (!memory && this.record) this.track.settleLoss();
    this.record = memory ? new RecordViews(memory) : null;
    this.recordStarted = false;
  }

  setRedundancy(frames: number): void {
    this.redundancy = Math.max(0, Math.min(MAX_REDUNDANCY, Math.round(frames)));
    this.keepHistory();
  }

  /** Redundant copies of earlier packets each packet carries (the room's setting). */
  get redundancyFrames(): number {
    return this.redundancy;
  }

  /** Quanta per packet in use. */
  get quantaPerPacket(): QuantaPerPacket {
    return this.perPacket;
  }

  setSend(channels: 1 | 2, muted: boolean, bits: SendBits, perPacket: QuantaPerPacket): void {
    this.channels = channels;
    this.muted = muted;
    this.format = formatOfBits(bits);
    this.perPacket = perPacket;
    this.keepHistory();
  }

  /** The earlier quanta each encoder keeps: a packet's copies of its earlier packets (and, packed, its pair). */
  private keepHistory(): void {
    this.pcm16.history.frames = this.pcm24.history.frames = copiesOf(this.perPacket, this.redundancy);
    this.mono16.history.frames = copiesOf(this.perPacket, 0);
    this.pcm16.history.silentCopies = this.pcm24.history.silentCopies = this.mono16.history.silentCopies = this.perPacket === 2;
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
    const rec = this.record;
    if (rec) {
      // Recording: the input as captured (before the gain) to the recorder worker's ring.
      if (!this.recordStarted) {
        rec.f64[REC_F64.FIRST_CAPTURE_MS] = captureUs / 1000;
        Atomics.store(rec.i32, REC_I32.STARTED, 1);
        this.recordStarted = true;
      }
      if (rec.ring.available_write() >= QUANTUM_SAMPLES) rec.ring.push(frame, QUANTUM_SAMPLES);
      else Atomics.add(rec.i32, REC_I32.OVERFLOWS, 1);
    }
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
      this.clockSkew.push(frame, captureUs);
      for (let stamp = this.clockSkew.pull(frame); stamp !== null; stamp = this.clockSkew.pull(frame)) this.sendFrame(stamp);
    } else {
      this.sendFrame(captureUs);
    }
  }

  private sendFrame(captureUs: number): void {
    if (this.muted) this.frame.fill(0);
    else if (__TUTTI_TEST__ && this.beatAt) {
      // Test switch playOnBeat: an impulse at the sample captured as a beat reaches our speaker
      // (negative: the tests tell it from anything else in the input by its sign).
      const o = this.beatAt(captureUs / 1000);
      if (o >= 0) this.frame[2 * o] = this.frame[2 * o + 1] = -0.9;
    }
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
    // Encode in our format, and in PCM16 too while a peer decodes nothing else (every quantum, so
    // that its copies stay consecutive).
    const wide = this.format === SampleFormat.PCM24;
    let legacy = false;
    if (wide) for (let i = 0; i < peers.length; i++) if (peers[i]!.wire < VERSION_PCM24) legacy = true;
    const main = wide ? this.pcm24 : this.pcm16;
    main.encode(this.frame, this.channels, this.streamId, this.seq, captureUs);
    if (!wide) this.pcm24.skip();
    else if (legacy) this.pcm16.encode(this.frame, this.channels, this.streamId, this.seq, captureUs);
    else this.pcm16.skip();
    let mono = false;
    if (this.channels === 2) for (let i = 0; i < peers.length; i++) if (peers[i]!.mono) mono = true;
    if (mono) this.mono16.encode(this.frame, 1, this.streamId, this.seq, captureUs);
    else this.mono16.skip();
    // Two quanta per packet: the first of each pair waits for the second, which carries it.
    const packed = this.perPacket === 2;
    const held = packed && (this.seq & 1) === 0;
    const packet = packed ? this.seq >>> 1 : this.seq;
    const dropped = held || (__TUTTI_TEST__ && this.test.dropEvery !== undefined && this.test.dropEvery >= 2 && packet % this.test.dropEvery === 0);
    if (!held) this.packets++;
    const sendMs = performance.now();
    for (let i = 0; i < peers.length; i++) {
      const p = peers[i]!;
      const ch = p.channel;
      if (dropped || ch.readyState !== 'open') continue;
      // The bottom of the governor's ladder: PCM16 mono (no copies but the pair's). Else a peer
      // whose link cannot afford all the copies gets a prefix of the packet.
      const enc = p.mono && this.channels === 2 ? this.mono16 : wide && p.wire >= VERSION_PCM24 ? this.pcm24 : this.pcm16;
      const bytes = enc.withCopies(copiesOf(this.perPacket, enc === this.mono16 ? 0 : p.copies));
      const n = bytes.length;
      if (p.queue.congested(ch, sendMs)) {
        p.sendDropped += this.perPacket; // congested: drop rather than queue (it would only arrive late)
        enc.restore();
        continue;
      }
      if (__TUTTI_TEST__ && (this.test.delayMs || this.test.jitterMs)) {
        // Test option: a fixed plus a random delay per packet (allocates; test build only).
        const copy = bytes.slice();
        setTimeout(() => ch.readyState === 'open' && ch.send(copy), (this.test.delayMs ?? 0) + Math.random() * (this.test.jitterMs ?? 0));
        p.queue.record(sendMs, n);
      } else {
        p.queue.send(ch, bytes, sendMs);
      }
      enc.restore();
      this.bytesOut += n;
    }
    if (__TUTTI_TEST__ && this.tap) this.tap.onSent(this.seq, main.packet, main.length, this.channels, main.format, this.frame);
    this.seq = seqAdd(this.seq, 1);
    this.sent++;
  }
}

/**
 * Copies a packet carries: `redundancy` copies of earlier quanta at one quantum per packet; at two,
 * the pair's first and nothing more. Two stereo PCM16 quanta (1038 bytes) fit one SCTP packet
 * (~1160 bytes of message in Chromium's); with the room's copies on top (2062 bytes) SCTP splits
 * each message over two datagrams, and the packets saved are spent again (measured: bench/room-cpu.ts,
 * docs/BENCHMARKS.md). So a lost packet loses both quanta (concealed), the price of half the packets.
 */
export function copiesOf(perPacket: QuantaPerPacket, redundancy: number): number {
  return perPacket === 2 ? 1 : Math.min(MAX_REDUNDANCY, redundancy);
}
