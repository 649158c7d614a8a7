// Network worker, incoming: every message on a peer's audio channel. Rejects what is malformed
// (counted per reason, PROTOCOL.md §1.7), answers control packets (ping, echo on/off), measures the
// loopback marker in our own echoed packets, echoes the peer's packets back when it asked, and
// writes each audio frame straight into the playback worklet's de-jitter slot, feeding the peer's
// latency, IFDV and drift measurements on the way. Also sends control packets (pings come from the
// network worker's timer). Importable without a worker global: the fuzzer drives it in Node.

import { JITTER_SLOTS, LOOPBACK_MARKER, QUANTUM_FRAMES, QUANTUM_MS } from '../src/shared/constants.ts';
import { PLAY_I32, slotOf, type PlaybackViews } from '../src/shared/memory-layout.ts';
import { CLOCK, ControlKind, FLAG, HEADER, MAGIC_VERSION_BYTE, Reject, SampleFormat, decodeHeader, encodeClockReply, encodeClockRequest, encodeControl, encodeOneWay, quantise, readSample, newHeader, BYTES_PER_SAMPLE, type PacketHeader } from '../src/shared/wire.ts';
import type { FromWorker, TestOptions } from '../src/shared/worker-protocol.ts';
import type { ArrivalTrace } from './arrival-stats.ts';
import { Arrival } from './jitter-writer.ts';
import { nowMs, nowUs, type RemotePeer } from './remote-peer.ts';
import { SpeakerTime } from './speaker-time.ts';
import type { Tap } from './test-tap.ts';

/** The loopback marker's samples as they come back in an echoed packet, per format (PCM16, PCM24). */
const MARKER_PCM = [LOOPBACK_MARKER.map((x) => quantise(x, SampleFormat.PCM16)), LOOPBACK_MARKER.map((x) => quantise(x, SampleFormat.PCM24))] as const;

export class Receiver {
  /** Time spent on incoming packets since the last stats, ms. */
  busyMs = 0;
  /** Every arrival recorded, while the page asks for a trace (bench). */
  trace: ArrivalTrace | null = null;
  private readonly header = newHeader();
  private readonly control = new Uint8Array(new ArrayBuffer(CLOCK.REPLY_SIZE));
  private readonly controlView = new DataView(this.control.buffer);

  constructor(
    private readonly play: PlaybackViews,
    /** Our own stream's id: an echoed packet of ours carries it. */
    private readonly ownStreamId: number,
    private readonly post: (msg: FromWorker) => void,
    /** Test build only (see net.worker.ts): null in production. */
    private readonly tap: Tap | null,
    /** When our playback reaches the speaker (the page's output-clock readings); without readings no one-way figure is taken. */
    private readonly speaker: SpeakerTime = new SpeakerTime(),
    /** Test build only (see net.worker.ts): empty in production. */
    private readonly test: TestOptions = {},
    /** This worker's clock for the shared clock's exchanges, ms since the epoch (skewed only by a test switch). */
    private readonly clock: () => number = nowMs,
  ) {}

  /** One message from `peer`'s channel (channel.onmessage). Never throws. */
  onPacket(peer: RemotePeer, data: unknown): void {
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
      if (__TUTTI_TEST__ && this.test.wireV1 && view.getUint8(HEADER.MAGIC_VERSION) !== MAGIC_VERSION_BYTE) {
        this.reject(peer, Reject.BAD_VERSION); // test switch: a decoder from before PCM24
        return;
      }
      peer.bytesIn += view.byteLength;
      if ((h.flags & FLAG.CONTROL) !== 0) {
        this.onControl(peer, h, this.clock());
        return;
      }
      if ((h.flags & FLAG.ECHOED) !== 0) {
        this.onEcho(peer, h, view);
        return;
      }
      if (peer.echo && peer.channel.readyState === 'open') {
        // Peer loopback at the other end's request: send its packet straight back, marked.
        new Uint8Array(data)[HEADER.FLAGS] = h.flags | FLAG.ECHOED;
        peer.queue.send(peer.channel, data, performance.now());
      }
      if ((h.flags & FLAG.SILENT) === 0) peer.format = h.format;
      // The renders so far, before and after the packet is placed against the playout's cursor: the
      // one-way delay below is taken only if none came in between (see there).
      const renderedBefore = Atomics.load(this.play.i32, PLAY_I32.QUANTA);
      const arrival = peer.writer.accept(h, view);
      const arrivalMs = nowMs();
      if (arrival === Arrival.RESYNC) {
        peer.controller.reset();
        peer.drift.reset();
      }
      // Both clocks are wall clocks; wraps at 2^32 µs. From arrivalMs, not a second read: the one-way
      // delay below adds (speaker time − arrivalMs) to it, and a preemption of this worker between two
      // reads (5–12 ms on a loaded machine) would be in one term and not the other.
      const transitUs = (Math.round(arrivalMs * 1000) - h.captureTimeUs) | 0;
      if (arrival === Arrival.ON_TIME || arrival === Arrival.RESYNC || arrival === Arrival.LATE) {
        const rendered = Atomics.load(this.play.i32, PLAY_I32.QUANTA);
        const lagQuanta = transitUs / 1000 / QUANTUM_MS;
        peer.controller.onArrival(h.sequence, rendered, lagQuanta, arrivalMs);
        peer.drift.add(h.sequence, h.captureTimeUs, arrivalMs);
        peer.controller.onLag(lagQuanta);
      }
      const marginFrames = peer.writer.lastMarginFrames;
      // A margin outside the ring is not a playout time: an arrival measured against the cursor of
      // a stream the worklet has not left yet (just after a resync). Its latency would be hours.
      if ((arrival === Arrival.ON_TIME || arrival === Arrival.RESYNC) && marginFrames >= -QUANTUM_FRAMES && marginFrames <= JITTER_SLOTS * QUANTUM_FRAMES) {
        peer.latency.add(transitUs / 1000 + (marginFrames / QUANTUM_FRAMES) * QUANTUM_MS);
        // The one-way delay: the frame plays `marginFrames` after the next render starts, at context
        // frame FRAME_BASE + 128 × QUANTA; the output clock dates that frame at the speaker. The margin
        // was measured against the cursor as it stood at accept(): if a render came since (a few µs
        // apart, unless this worker was preempted between, then by as many quanta as the pause
        // lasted), QUANTA no longer matches it and the figure would be that much high; no sample then.
        // The next render cannot reach the speaker before now: while the audio thread is late (a
        // busy machine), the frame it has not rendered yet is not played at the time the device's
        // clock gives that frame, but when the render catches up (a clean-clone run read the
        // speaker 11.6 ms *before* our playout). So its time is at least now, a lower bound.
        const renderedAfter = Atomics.load(this.play.i32, PLAY_I32.QUANTA);
        const next = this.play.nextRenderFrame(renderedAfter);
        const nextMs = renderedAfter === renderedBefore ? this.speaker.wallOf(next, arrivalMs) : null;
        if (nextMs !== null) {
          const oneWayMs = transitUs / 1000 + Math.max(0, nextMs - arrivalMs) + (marginFrames / QUANTUM_FRAMES) * QUANTUM_MS;
          // Shown (stats) only once our output's dating has settled (SpeakerTime.settled: up to
          // 30 ms off in its first 10 s); the reports below time a leader's metronome, where a
          // rough figure beats none.
          if (this.speaker.settled) peer.oneWay.add(oneWayMs);
          if (__TUTTI_TEST__ && this.tap) this.tap.oneWayLog(peer.id).record(h.sequence, arrivalMs, transitUs / 1000, oneWayMs, (next + marginFrames) | 0);
          // The report leaves out a backlog about to be trimmed (DepthController.pendingTrim).
          const trim = peer.controller.pendingTrim();
          peer.oneWayReports.add(oneWayMs - trim * QUANTUM_MS, arrivalMs - performance.timeOrigin, trim > 0);
        }
      }
      if (arrival === Arrival.ON_TIME || arrival === Arrival.RESYNC) peer.ifdv.add(h.sequence, arrivalMs, h.captureTimeUs / 1000);
      if (this.trace) this.trace.add(peer.id, h.sequence, arrivalMs, h.captureTimeUs / 1000);
      if (__TUTTI_TEST__ && this.tap) {
        const silent = (h.flags & FLAG.SILENT) !== 0;
        if (arrival === Arrival.ON_TIME || arrival === Arrival.RESYNC) this.tap.onDecoded(peer.id, h.sequence, this.play.f32, this.play.samples(peer.writer.peer, slotOf(h.sequence)), h.channels, silent, h.format);
        // Frames stored from the packet's copies (a lost packet's, or the pair's first at two quanta per packet).
        for (let k = 0; k < peer.writer.recoveredNow; k++) {
          const s = peer.writer.recoveredSeqs[k]!;
          this.tap.onDecoded(peer.id, s, this.play.f32, this.play.samples(peer.writer.peer, slotOf(s)), h.channels, silent, h.format);
        }
      }
    } catch (err) {
      // Never let one packet take the worker's event loop down.
      this.reject(peer, Reject.INTERNAL);
      this.post({ type: 'error', message: `packet handling failed: ${String(err)}` });
    } finally {
      this.busyMs += performance.now() - t0;
    }
  }

  /** A control packet to `peer` (PROTOCOL.md §1.8), if its channel is open. */
  sendControl(peer: RemotePeer, kind: ControlKind, id: number, time: number): void {
    if (peer.channel.readyState !== 'open') return;
    const n = encodeControl(this.controlView, kind, id, time);
    peer.queue.send(peer.channel, this.control.subarray(0, n), performance.now());
  }

  private reject(peer: RemotePeer, why: Reject): void {
    peer.rejected++;
    peer.rejectedBy[why]!++;
  }

  /** A clock request to `peer` (the network worker's clock timer: its app answers them, wire ≥ 3). False if its channel is not open. */
  sendClockRequest(peer: RemotePeer): boolean {
    if (peer.channel.readyState !== 'open') return false;
    peer.clockId = (peer.clockId + 1) >>> 0;
    const n = encodeClockRequest(this.controlView, peer.clockId, this.clock());
    peer.queue.send(peer.channel, this.control.subarray(0, n), performance.now());
    return true;
  }

  /** 10 Hz: the one-way delay of `peer`'s audio to our speaker (the last 0.4 s), to `peer` (its app takes them: wire ≥ 4). */
  sendOneWay(peer: RemotePeer): void {
    const ms = peer.oneWayReports.report(performance.now());
    if (ms === null || peer.channel.readyState !== 'open') return;
    peer.oneWayReports.sentId = (peer.oneWayReports.sentId + 1) >>> 0;
    const n = encodeOneWay(this.controlView, peer.oneWayReports.sentId, ms * 1000);
    peer.queue.send(peer.channel, this.control.subarray(0, n), performance.now());
  }

  /** `at`: our clock when the packet was taken from the channel (a clock exchange's t2 or t4). */
  private onControl(peer: RemotePeer, h: PacketHeader, at: number): void {
    switch (h.control) {
      case ControlKind.CLOCK_REQUEST:
        if (peer.channel.readyState !== 'open') return;
        peer.queue.send(peer.channel, this.control.subarray(0, encodeClockReply(this.controlView, h.controlId, h.clockT1, at, this.clock())), performance.now());
        return;
      case ControlKind.CLOCK_REPLY:
        // Only an answer to one of our last few requests (ids count up by one per request: the
        // last 0.4 s at 20 a second, 2 s at 4; a slower reply is no use to the band anyway).
        if (((peer.clockId - h.controlId) >>> 0) < 8) peer.clock.add(h.clockT1, h.clockT2, h.clockT3, at);
        return;
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
      case ControlKind.ONE_WAY:
        peer.oneWayReports.received(h.controlId, h.controlTime / 1000, performance.now());
        return;
    }
  }

  /** One of our own packets, echoed by the peer: look for the loopback marker in it. */
  private onEcho(peer: RemotePeer, h: PacketHeader, view: DataView): void {
    if (!peer.loopback || h.streamId !== this.ownStreamId || h.sequence !== peer.markerSeq) return;
    if ((h.flags & FLAG.SILENT) !== 0) return;
    if (h.format !== SampleFormat.PCM16 && h.format !== SampleFormat.PCM24) return;
    const marker = MARKER_PCM[h.format];
    const stride = h.channels * BYTES_PER_SAMPLE[h.format];
    for (let f = 0; f < marker.length; f++) {
      if (readSample(view, HEADER.SIZE + f * stride, h.format) !== marker[f]) return;
    }
    peer.loopbackRttMs = Math.round(((nowUs() - peer.markerUs) / 1000) * 100) / 100;
    peer.markerSeq = -1;
  }
}
