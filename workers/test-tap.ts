// Test tap of the network worker: records a hash per encoded and per decoded frame so the
// end-to-end tests can prove bit-exactness between two browsers, and the decoded PCM of the last
// seconds per peer so a test can compare what a production sender (which has no tap) sent with
// the WAV it was fed. Exists only in the test build (net.worker.ts creates it behind
// `__TUTTI_TEST__` and the `test.tap` init option); the test reads it with Playwright's
// worker.evaluate(), never through the page.

import { QUANTUM_FRAMES, QUANTUM_SAMPLES } from '../src/shared/constants.ts';
import { FLAG, HEADER, decodedHash, floatToPcm24, payloadHash, quantumBytes, type SampleFormat } from '../src/shared/wire.ts';

const CAPACITY = 375 * 120; // two minutes of frames per stream
/** Decoded quanta kept per peer for `pcm`: the last six seconds (1.2 MB per peer). */
const PCM_QUANTA = 375 * 6;

export class FrameLog {
  readonly seqs = new Uint32Array(CAPACITY);
  readonly hashes = new Uint32Array(CAPACITY);
  count = 0;
  record(seq: number, hash: number): void {
    if (this.count >= CAPACITY) return;
    this.seqs[this.count] = seq;
    this.hashes[this.count] = hash;
    this.count++;
  }
  /** Plain-object snapshot for worker.evaluate. */
  toJSON(): { seqs: number[]; hashes: number[] } {
    return { seqs: Array.from(this.seqs.subarray(0, this.count)), hashes: Array.from(this.hashes.subarray(0, this.count)) };
  }
}

/**
 * The most recent PCM_QUANTA decoded quanta of one peer at 24-bit scale (x × 2^23: a PCM16
 * sample s is s × 256, exactly), stereo interleaved (a mono sender's samples twice), with their
 * sequences, in arrival order. A circular buffer: the test
 * reads the newest seconds whenever it likes.
 */
export class PcmLog {
  readonly seqs = new Uint32Array(PCM_QUANTA);
  readonly pcm = new Int32Array(PCM_QUANTA * QUANTUM_SAMPLES);
  /** Quanta recorded since the start (the buffer holds the last min(count, PCM_QUANTA)). */
  count = 0;
  record(seq: number, src: Float32Array, offset: number): void {
    const i = this.count % PCM_QUANTA;
    this.seqs[i] = seq;
    const base = i * QUANTUM_SAMPLES;
    for (let k = 0; k < QUANTUM_SAMPLES; k++) this.pcm[base + k] = floatToPcm24(src[offset + k]!);
    this.count++;
  }
  /** Oldest first. `pcm` holds QUANTUM_SAMPLES values per entry of `seqs`. */
  toJSON(): { seqs: number[]; pcm: number[] } {
    const n = Math.min(this.count, PCM_QUANTA);
    const start = this.count - n;
    const seqs: number[] = [];
    const pcm: number[] = [];
    for (let j = 0; j < n; j++) {
      const i = (start + j) % PCM_QUANTA;
      seqs.push(this.seqs[i]!);
      const q = this.pcm.subarray(i * QUANTUM_SAMPLES, (i + 1) * QUANTUM_SAMPLES);
      for (let k = 0; k < QUANTUM_SAMPLES; k++) pcm.push(q[k]!);
    }
    return { seqs, pcm };
  }
}

/**
 * Per frame given a one-way figure (PeerStats.oneWayMs): its sequence, when it arrived (wall ms),
 * its transit (arrival − the sender's capture stamp, ms) and the one-way figure, the last two
 * minutes: a bench can date one sound at both ends as the app does (bench/m2e/segments/pair-joins.ts).
 */
export class OneWayLog {
  readonly seqs = new Uint32Array(CAPACITY);
  readonly arrivalMs = new Float64Array(CAPACITY);
  readonly transitMs = new Float64Array(CAPACITY);
  readonly oneWayMs = new Float64Array(CAPACITY);
  /** The context frame (modulo 2^32) at which the worker expects the frame's first sample to be rendered. */
  readonly playFrame = new Int32Array(CAPACITY);
  count = 0;
  record(seq: number, arrivalMs: number, transitMs: number, oneWayMs: number, playFrame: number): void {
    const i = this.count++ % CAPACITY;
    this.playFrame[i] = playFrame;
    this.seqs[i] = seq;
    this.arrivalMs[i] = arrivalMs;
    this.transitMs[i] = transitMs;
    this.oneWayMs[i] = oneWayMs;
  }
  /** Oldest first. */
  toJSON(): { seqs: number[]; arrivalMs: number[]; transitMs: number[]; oneWayMs: number[]; playFrame: number[] } {
    const n = Math.min(this.count, CAPACITY);
    const out = { seqs: [] as number[], arrivalMs: [] as number[], transitMs: [] as number[], oneWayMs: [] as number[], playFrame: [] as number[] };
    for (let j = this.count - n; j < this.count; j++) {
      const i = j % CAPACITY;
      out.seqs.push(this.seqs[i]!);
      out.arrivalMs.push(this.arrivalMs[i]!);
      out.transitMs.push(this.transitMs[i]!);
      out.oneWayMs.push(this.oneWayMs[i]!);
      out.playFrame.push(this.playFrame[i]!);
    }
    return out;
  }
}

export class Tap {
  readonly sent = new FrameLog();
  readonly received = new Map<string, FrameLog>();
  /** Decoded PCM per peer (the last seconds). */
  readonly pcm = new Map<string, PcmLog>();
  /** One-way figures per peer (the last two minutes). */
  readonly oneWay = new Map<string, OneWayLog>();
  /**
   * Per peer, each 10 Hz steer of its playout (the last two minutes): wall ms, the fill windows'
   * low points read then (quanta, '/'-joined), TRIMMED, UNDERRUNS, MISSED, the rate set, the target,
   * and the stall trim asked then (quanta, 0 none). For explaining a move of the one-way delay.
   */
  readonly steer = new Map<string, (string | number)[][]>();
  onSteer(peerId: string, row: (string | number)[]): void {
    let l = this.steer.get(peerId);
    if (!l) this.steer.set(peerId, (l = []));
    if (l.length >= 10 * 120) l.shift();
    l.push(row);
  }
  /**
   * The output-clock readings the worker got (context s, wall ms) and the speaker offset it then
   * used, the last two minutes; beside each, the quanta our playback worklet had rendered when the
   * worker took it and the wall ms then: the render count against the wall clock, a second view of
   * our output's clock that no latency estimate smooths (bench/m2e/segments/drift-replay.ts).
   */
  readonly outputClock: { contextS: number[]; wallMs: number[]; offsetMs: number[]; renderedQ: number[]; renderedAtMs: number[] } = { contextS: [], wallMs: [], offsetMs: [], renderedQ: [], renderedAtMs: [] };
  /** The most recent second of the sent signal's left channel (circular), to check the capture is the test's WAV. */
  readonly sentSignal = new Float32Array(48_000);
  sentSignalLength = 0;
  constructor(readonly streamId: number) {}

  log(peerId: string): FrameLog {
    let l = this.received.get(peerId);
    if (!l) this.received.set(peerId, (l = new FrameLog()));
    return l;
  }

  pcmLog(peerId: string): PcmLog {
    let l = this.pcm.get(peerId);
    if (!l) this.pcm.set(peerId, (l = new PcmLog()));
    return l;
  }

  /**
   * One frame sent: `packet` as encoded (`length` bytes, the full-copy packet), `frame` the stereo
   * bus it was encoded from. Hashes only the current quantum, not the redundant copies after it.
   */
  onSent(seq: number, packet: Uint8Array, length: number, channels: 1 | 2, format: SampleFormat, frame: Float32Array): void {
    const silent = (packet[HEADER.FLAGS]! & FLAG.SILENT) !== 0;
    this.sent.record(seq, payloadHash(packet, silent ? length : HEADER.SIZE + quantumBytes(channels, format)));
    const sig = this.sentSignal;
    for (let f = 0; f < QUANTUM_FRAMES; f++) sig[this.sentSignalLength++ % sig.length] = frame[2 * f]!;
  }

  oneWayLog(peerId: string): OneWayLog {
    let l = this.oneWay.get(peerId);
    if (!l) this.oneWay.set(peerId, (l = new OneWayLog()));
    return l;
  }

  onOutputClock(contextS: number, wallMs: number, offsetMs: number, renderedQ: number): void {
    const o = this.outputClock;
    if (o.contextS.length >= 20 * 120) for (const a of [o.contextS, o.wallMs, o.offsetMs, o.renderedQ, o.renderedAtMs]) a.shift();
    o.renderedQ.push(renderedQ);
    o.renderedAtMs.push(performance.timeOrigin + performance.now());
    o.contextS.push(contextS);
    o.wallMs.push(wallMs);
    o.offsetMs.push(offsetMs);
  }

  /** One frame of `peerId` decoded into shared memory at `offset` of `f32` (stereo interleaved). */
  onDecoded(peerId: string, seq: number, f32: Float32Array, offset: number, channels: number, silent: boolean, format: SampleFormat): void {
    this.log(peerId).record(seq, decodedHash(f32, offset, channels, silent, format));
    this.pcmLog(peerId).record(seq, f32, offset);
  }
}
