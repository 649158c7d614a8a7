// De-jitter rings end to end, single-threaded: JitterWriter (network-worker side) and Mixer
// (playback-worklet side) share one playback SharedArrayBuffer, driven by a virtual clock in
// render quanta. Each tick: every sending peer emits its next sequence; packets reach the writer
// after a per-packet network delay from a schedule (fractional quanta allowed), in arrival order;
// then the mixer renders one quantum. Every frame's samples are the constant frameId(seq), so what
// the mixer played can be identified from the output: at rate 1 the playout FIFO is bit-exact and
// HALF frames (the resampler's look-ahead) behind, so the last output frame of a quantum is frame
// 119 of the quantum taken in that render.
//
// Two layers of checks:
//  - raw invariants: a frame plays at most once, in increasing order, only where its own sequence
//    is due, never before it arrived, never after it was counted late;
//  - a small reference model of the documented design (ring slot = s % 64 valid while TAG = s;
//    per render one quantum is taken: present → PLAYED; absent and something newer arrived →
//    concealed, MISSED, the cursor moves on; absent and nothing newer → UNDERRUN, the cursor waits;
//    after more than PLC_FADE_QUANTA concealed quanta, rebuffer silently to the target depth;
//    resync at cursor = first − depth, or newest − depth if adopted late with more than
//    PILED_BEYOND frames beyond the depth; redundant copies fill
//    missing slots still ahead of playout), compared delivery by delivery, render by render and
//    counter by counter with the code.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_DEPTH, JITTER_SLOTS, MAX_PEERS, MAX_RATE_DEVIATION, QUANTUM_FRAMES, QUANTUM_SAMPLES, TRIM_EXCESS } from '../../src/shared/constants.ts';
import { HeardFlag, PEER_F32, PEER_I32, PLAY_F32, PeerState, PlaybackViews, createPlaybackMemory } from '../../src/shared/memory-layout.ts';
import { seqAdd, seqDiff } from '../../src/shared/seq.ts';
import { MAX_PACKET_BYTES, RedundancyHistory, Reject, decodeHeader, encodePacket, newHeader } from '../../src/shared/wire.ts';
import { Arrival, JitterWriter, RESYNC_AFTER_LATE, findFreePeer } from '../../workers/jitter-writer.ts';
import { Mixer } from '../../worklets/mixer.ts';
import { PLC_FADE_QUANTA } from '../../worklets/plc.ts';
import { PILED_BEYOND, STALL_TRIM_DEFICIT, TRIM_NOW_WINDOWS } from '../../worklets/peer-playout.ts';
import { HALF } from '../../worklets/resampler.ts';
import { mulberry32, randInt, testSeeds } from './prng.ts';

const ARRIVAL_NAMES = ['ON_TIME', 'LATE', 'DUPLICATE', 'RESYNC'] as const;
/** Output frame whose value identifies the quantum taken in a render (see the file header). */
const PROBE = QUANTUM_FRAMES - 1;

/** Identity carried by every sample of frame `seq`: a non-zero int16 (0 would be a SILENT packet). */
const ID_MOD = 30000;
function frameId(seq: number): number {
  return (seq % ID_MOD) + 1;
}

/** Delays (in quanta) of the copies of one packet: [] = lost, two entries = duplicated. */
type DelayFn = (seq: number, tick: number) => number[];

interface Packet {
  peer: number;
  streamIdx: number;
  seq: number;
  sentTick: number;
  arrival: number;
  order: number;
  bytes: Uint8Array;
  len: number;
}

interface Delivery {
  tick: number;
  seq: number;
  streamIdx: number;
  got: Arrival;
  want: Arrival;
}

type RenderKind = 'idle' | 'pre' | 'play' | 'miss' | 'underrun' | 'rebuffer';

/** The documented design, written independently of the implementation (see the file header). */
class SpecModel {
  // writer side
  started = false;
  streamId = -1;
  previousStreamId = -1;
  consecutiveLate = 0;
  depth: number;
  pending: { first: number; cursor: number } | null = null;
  /** Frames stored in their slot (TAG === seq) for the current timeline. */
  stored = new Set<number>();
  /** Frames played in the current timeline. */
  consumed = new Set<number>();
  newest = 0;
  received = 0;
  recovered = 0;
  late = 0;
  duplicates = 0;
  resyncs = 0;
  stale = 0;
  // worklet side
  mStarted = false;
  cursor = 0;
  first = 0;
  run = 0;
  outage = false;
  played = 0;
  missed = 0;
  concealed = 0;
  underruns = 0;

  constructor(depth: number) {
    this.depth = depth;
  }

  accept(seq: number, streamId: number, redundancy: number): Arrival {
    if (this.started && streamId === this.previousStreamId) {
      this.stale++;
      return Arrival.LATE;
    }
    if (!this.started || streamId !== this.streamId) return this.resync(seq, streamId);
    const cursor = this.pending ? this.pending.cursor : this.cursor;
    const ahead = seqDiff(seq, cursor);
    if (ahead < 0) {
      if (this.consumed.has(seq)) {
        this.duplicates++;
        return Arrival.DUPLICATE;
      }
      if (++this.consecutiveLate >= RESYNC_AFTER_LATE) return this.resync(seq, streamId);
      this.late++;
      return Arrival.LATE;
    }
    if (ahead >= JITTER_SLOTS) return this.resync(seq, streamId);
    this.consecutiveLate = 0;
    // A packet whose own frame is already there (e.g. recovered from a later packet that overtook
    // it) still carries copies of older frames that may be missing: use them either way.
    const duplicate = this.stored.has(seq);
    if (duplicate) this.duplicates++;
    else {
      this.stored.add(seq);
      this.received++;
    }
    const first = this.pending ? this.pending.first : this.first;
    for (let k = 1; k <= redundancy; k++) {
      const s = seqAdd(seq, -k);
      if (seqDiff(s, cursor) < 0 || seqDiff(s, first) < 0) break;
      if (this.stored.has(s)) continue;
      this.stored.add(s);
      this.recovered++;
    }
    if (duplicate) return Arrival.DUPLICATE;
    if (seqDiff(seq, this.newest) > 0) this.newest = seq;
    return Arrival.ON_TIME;
  }

  private resync(seq: number, streamId: number): Arrival {
    if (this.started) this.resyncs++;
    if (this.started && streamId !== this.streamId) this.previousStreamId = this.streamId;
    this.started = true;
    this.streamId = streamId;
    this.consecutiveLate = 0;
    this.pending = { first: seq, cursor: seqAdd(seq, -this.depth) };
    this.stored = new Set([seq]);
    this.consumed = new Set();
    this.newest = seq;
    this.received++;
    return Arrival.RESYNC;
  }

  /** One render quantum: what this peer's playout does. */
  render(): { kind: RenderKind; seq: number } {
    if (this.pending) {
      this.cursor = this.pending.cursor;
      this.first = this.pending.first;
      // Adopted late with more frames piled up beyond the depth than two device periods' bursts
      // (PILED_BEYOND): start depth behind the newest, the margin a timely resync gives
      // (newest = first, cursor = first − depth).
      if (seqDiff(this.newest, this.cursor) > this.depth + PILED_BEYOND) {
        this.cursor = seqAdd(this.newest, -this.depth);
        if (seqDiff(this.cursor, this.first) > 0) this.first = this.cursor;
      }
      this.mStarted = true;
      this.outage = false;
      this.run = 0;
      this.pending = null;
    }
    if (!this.mStarted) return { kind: 'idle', seq: 0 };
    const seq = this.cursor;
    if (seqDiff(seq, this.first) < 0) {
      this.cursor = seqAdd(seq, 1);
      return { kind: 'pre', seq };
    }
    const ahead = seqDiff(this.newest, seq);
    if (this.outage) {
      // Even the cursor's own frame waits until the target depth has arrived again.
      if (ahead + 1 < this.depth) {
        this.underruns++;
        return { kind: 'rebuffer', seq };
      }
      this.outage = false;
    }
    if (this.stored.has(seq)) {
      this.played++;
      this.consumed.add(seq);
      this.run = 0;
      this.outage = false;
      this.cursor = seqAdd(seq, 1);
      return { kind: 'play', seq };
    }
    this.run++;
    if (this.run <= PLC_FADE_QUANTA) this.concealed++;
    if (ahead > 0) {
      this.missed++;
      this.cursor = seqAdd(seq, 1);
      return { kind: 'miss', seq };
    }
    this.underruns++;
    if (this.run > PLC_FADE_QUANTA) this.outage = true;
    return { kind: 'underrun', seq };
  }
}

/** One remote peer: its sender, its JitterWriter, the reference model and what was observed. */
class PeerSim {
  readonly writer: JitterWriter;
  readonly model: SpecModel;
  // sender
  streamIds: number[] = [];
  nextSeq = 0;
  sending = true;
  readonly history = new RedundancyHistory();
  /** seq → stream index; sequences are unique across a peer's streams by construction. */
  readonly streamOf = new Map<number, number>();
  readonly sentTick = new Map<number, number>();
  readonly dropped: number[] = [];
  // observations
  readonly deliveries: Delivery[] = [];
  readonly firstDelivery = new Map<number, number>();
  readonly lateSeqs = new Set<number>();
  readonly played: { tick: number; seq: number }[] = [];
  readonly playedSet = new Set<number>();
  /** Tick at which the cursor moved past each sequence (played or missed). */
  readonly passTick = new Map<number, number>();
  readonly missedSeqs: number[] = [];
  /** Ticks of each kind of render. */
  readonly kinds: RenderKind[] = [];
  /** PROBE output value (as an int16 id) per tick; NaN where concealed. */
  readonly output: number[] = [];

  constructor(
    readonly sim: Sim,
    readonly peer: number,
    readonly channel: 0 | 1,
    depth: number,
    public delay: DelayFn,
    streamId: number,
    firstSeq: number,
    redundancy: number,
  ) {
    this.writer = new JitterWriter(sim.v, peer, depth);
    this.model = new SpecModel(this.writer.playCounter(PEER_I32.TARGET_DEPTH));
    this.history.frames = redundancy;
    this.restart(streamId, firstSeq);
  }

  /** The sender (re)starts capture: a new stream id and a new first sequence. */
  restart(streamId: number, firstSeq: number): void {
    this.streamIds.push(streamId & 0xff);
    this.nextSeq = firstSeq >>> 0;
    this.history.reset();
  }

  setDepth(depth: number): void {
    this.writer.setDepth(depth);
    this.model.depth = this.writer.playCounter(PEER_I32.TARGET_DEPTH);
  }

  get streamIdx(): number {
    return this.streamIds.length - 1;
  }

  count(kind: RenderKind): number {
    return this.kinds.filter((k) => k === kind).length;
  }
}

const COUNTERS = [PEER_I32.PLAYED, PEER_I32.MISSED, PEER_I32.CONCEALED, PEER_I32.UNDERRUNS] as const;

class Sim {
  readonly v = new PlaybackViews(createPlaybackMemory());
  readonly mixer = new Mixer(this.v);
  readonly peers: PeerSim[] = [];
  readonly h = newHeader();
  readonly src = new Float32Array(QUANTUM_SAMPLES);
  readonly outL = new Float32Array(QUANTUM_FRAMES);
  readonly outR = new Float32Array(QUANTUM_FRAMES);
  inflight: Packet[] = [];
  now = 0;
  order = 0;
  /** false: the worklet is not running yet (renders nothing; the model does not advance either). */
  rendering = true;
  readonly problems: string[] = [];

  constructor(readonly seed: number) {}

  addPeer(opts: { depth?: number; delay: DelayFn; streamId: number; firstSeq: number; redundancy?: number }): PeerSim {
    const peer = this.peers.length;
    const p = new PeerSim(this, peer, peer === 0 ? 0 : 1, opts.depth ?? DEFAULT_DEPTH, opts.delay, opts.streamId, opts.firstSeq, opts.redundancy ?? 0);
    this.peers.push(p);
    return p;
  }

  problem(msg: string): void {
    if (this.problems.length < 40) this.problems.push(`tick ${this.now}: ${msg}`);
  }

  private send(p: PeerSim): void {
    const seq = p.nextSeq;
    p.nextSeq = seqAdd(seq, 1);
    assert.ok(!p.streamOf.has(seq), `seed ${this.seed}: test bug, sequence ${seq} reused across streams`);
    p.streamOf.set(seq, p.streamIdx);
    p.sentTick.set(seq, this.now);
    // The samples identify the frame: peer 0 on the left channel, peer 1 on the right.
    const x = frameId(seq) / 32768;
    for (let f = 0; f < QUANTUM_FRAMES; f++) {
      this.src[2 * f + p.channel] = x;
      this.src[2 * f + 1 - p.channel] = 0;
    }
    // Encoded once whatever happens to it (the redundancy history is the sender's, not the network's).
    const bytes = new Uint8Array(MAX_PACKET_BYTES);
    const len = encodePacket(bytes, new DataView(bytes.buffer), this.src, 2, p.streamIds[p.streamIdx]!, seq, Math.round(this.now * 2667), p.history);
    const delays = p.delay(seq, this.now);
    if (delays.length === 0) p.dropped.push(seq);
    for (const d of delays) this.inflight.push({ peer: p.peer, streamIdx: p.streamIdx, seq, sentTick: this.now, arrival: this.now + d, order: this.order++, bytes, len });
  }

  private deliver(pkt: Packet): void {
    const p = this.peers[pkt.peer]!;
    const view = new DataView(pkt.bytes.buffer, 0, pkt.len);
    const r = decodeHeader(view, this.h);
    assert.equal(r, Reject.OK, `seed ${this.seed}: encoded packet rejected`);
    const got = p.writer.accept(this.h, view);
    const want = p.model.accept(pkt.seq, this.h.streamId, this.h.redundancy);
    p.deliveries.push({ tick: this.now, seq: pkt.seq, streamIdx: pkt.streamIdx, got, want });
    if (got !== want) this.problem(`peer ${p.peer}: seq ${pkt.seq} (sent at tick ${pkt.sentTick}) → ${ARRIVAL_NAMES[got]}, the design says ${ARRIVAL_NAMES[want]}`);
    if (!p.firstDelivery.has(pkt.seq)) p.firstDelivery.set(pkt.seq, this.now);
    // Copies carried as redundancy arrive with it too.
    for (let k = 1; k <= this.h.redundancy; k++) {
      const s = seqAdd(pkt.seq, -k);
      if (!p.firstDelivery.has(s)) p.firstDelivery.set(s, this.now);
    }
    if (got === Arrival.LATE) p.lateSeqs.add(pkt.seq);
  }

  /** One quantum of virtual time. `before` runs after the deliveries and before the render. */
  tick(before?: () => void): void {
    for (const p of this.peers) if (p.sending) this.send(p);
    const due = this.inflight.filter((x) => x.arrival <= this.now).sort((a, b) => a.arrival - b.arrival || a.order - b.order);
    this.inflight = this.inflight.filter((x) => x.arrival > this.now);
    for (const pkt of due) this.deliver(pkt);
    before?.();
    if (this.rendering) {
      const v = this.v;
      const pre = this.peers.map((p) => COUNTERS.map((f) => Atomics.load(v.i32, v.peerI32(p.peer, f))));
      this.mixer.render(this.outL, this.outR);
      for (const p of this.peers) this.observe(p, pre[p.peer]!);
    }
    this.now++;
  }

  private observe(p: PeerSim, pre: number[]): void {
    const v = this.v;
    const out = p.channel === 0 ? this.outL : this.outR;
    const [dPlayed, dMissed, dConcealed, dUnder] = COUNTERS.map((f, i) => Atomics.load(v.i32, v.peerI32(p.peer, f)) - pre[i]!) as [number, number, number, number];
    const cursor = Atomics.load(v.i32, v.peerI32(p.peer, PEER_I32.CURSOR)) >>> 0;
    const expect = p.model.render();
    const tag = `peer ${p.peer}`;
    let kind: RenderKind;
    if (dPlayed + dMissed + dUnder > 1) {
      this.problem(`${tag}: more than one quantum taken in one render (played ${dPlayed}, missed ${dMissed}, underruns ${dUnder})`);
      kind = 'idle';
    } else if (dPlayed === 1) kind = 'play';
    else if (dMissed === 1) kind = 'miss';
    else if (dUnder === 1) kind = dConcealed === 1 || expect.kind === 'underrun' ? 'underrun' : 'rebuffer';
    else kind = expect.kind === 'idle' ? 'idle' : 'pre';
    p.kinds.push(kind);
    if (dConcealed > 0 && kind !== 'miss' && kind !== 'underrun') this.problem(`${tag}: CONCEALED counted on a ${kind}`);

    const x = out[PROBE]!;
    const id = x * 32768;
    const moved = kind === 'play' || kind === 'miss' || kind === 'pre';
    const seq = seqAdd(cursor, moved ? -1 : 0);
    if (kind !== expect.kind || (kind !== 'idle' && seq !== expect.seq)) {
      this.problem(`${tag}: render ${kind} at seq ${seq} (output id ${id}), the design says ${expect.kind} at seq ${expect.seq}`);
    }
    if (expect.kind !== 'idle' && cursor !== p.model.cursor) this.problem(`${tag}: cursor ${cursor}, the design says ${p.model.cursor}`);

    if (kind === 'play') {
      // Raw invariants: own slot (bit-exact at rate 1), arrived, not late, once, in order.
      if (id !== frameId(seq)) this.problem(`${tag}: played output id ${id} for seq ${seq} (id ${frameId(seq)})`);
      const arrived = p.firstDelivery.get(seq);
      if (arrived === undefined || arrived > this.now) this.problem(`${tag}: seq ${seq} played before it arrived`);
      if (p.lateSeqs.has(seq)) this.problem(`${tag}: seq ${seq} was counted late but played`);
      if (p.playedSet.has(seq)) this.problem(`${tag}: seq ${seq} played twice`);
      const last = p.played[p.played.length - 1];
      if (last !== undefined) {
        const sLast = p.streamOf.get(last.seq) ?? -1;
        const sNow = p.streamOf.get(seq) ?? -1;
        if (sNow < sLast) this.problem(`${tag}: seq ${seq} of stream ${sNow} played after stream ${sLast}`);
        if (sNow === sLast && seqDiff(seq, last.seq) <= 0) this.problem(`${tag}: seq ${seq} played after seq ${last.seq}`);
      }
      p.playedSet.add(seq);
      p.played.push({ tick: this.now, seq });
      p.passTick.set(seq, this.now);
      p.output.push(id);
    } else if (kind === 'miss') {
      p.missedSeqs.push(seq);
      p.passTick.set(seq, this.now);
      p.output.push(NaN);
    } else if (kind === 'underrun') {
      p.output.push(NaN);
    } else {
      // idle, pre-first and rebuffer quanta are digital silence.
      if (x !== 0) this.problem(`${tag}: ${kind} quantum is not silent (${x})`);
      p.output.push(0);
    }
  }

  run(ticks: number, at?: (tick: number) => void): void {
    for (let i = 0; i < ticks; i++) {
      at?.(this.now);
      this.tick();
    }
  }

  /** Final cross-checks between counters, model and observations for every peer. */
  finish(): void {
    for (const p of this.peers) {
      const c = p.writer.counters;
      const m = p.model;
      const tag = `peer ${p.peer}`;
      const actual = { received: c.received, recovered: c.recovered, late: c.late, duplicates: c.duplicates, resyncs: c.resyncs, stale: c.stale };
      const wanted = { received: m.received, recovered: m.recovered, late: m.late, duplicates: m.duplicates, resyncs: m.resyncs, stale: m.stale };
      if (JSON.stringify(actual) !== JSON.stringify(wanted)) this.problem(`${tag}: writer counters ${JSON.stringify(actual)}, the design says ${JSON.stringify(wanted)}`);
      const n = p.deliveries.length;
      if (c.received + c.late + c.duplicates + c.stale !== n) this.problem(`${tag}: received ${c.received} + late ${c.late} + duplicates ${c.duplicates} + stale ${c.stale} != ${n} deliveries`);
      const byKind = [0, 0, 0, 0];
      for (const d of p.deliveries) byKind[d.got]!++;
      if (c.late + c.stale !== byKind[Arrival.LATE]!) this.problem(`${tag}: late ${c.late} + stale ${c.stale} != ${byKind[1]} LATE arrivals`);
      if (c.resyncs !== Math.max(0, byKind[Arrival.RESYNC]! - 1)) this.problem(`${tag}: resyncs counter ${c.resyncs} != ${byKind[3]} RESYNC arrivals - 1`);
      const counters = COUNTERS.map((f) => p.writer.playCounter(f));
      const model = [m.played, m.missed, m.concealed, m.underruns];
      const observed = [p.played.length, p.missedSeqs.length, NaN, p.count('underrun') + p.count('rebuffer')];
      if (JSON.stringify(counters) !== JSON.stringify(model)) this.problem(`${tag}: PLAYED/MISSED/CONCEALED/UNDERRUNS ${counters}, the design says ${model}`);
      if (counters[0] !== observed[0] || counters[1] !== observed[1] || counters[3] !== observed[3]) this.problem(`${tag}: counters ${counters} vs observed renders ${observed}`);
    }
  }

  assertClean(what: string): void {
    this.finish();
    assert.equal(this.problems.length, 0, `${what}, seed ${this.seed} (rerun with TUTTI_SEED=${this.seed}):\n  ${this.problems.join('\n  ')}`);
  }

  /** Deliveries that arrived after the tick at which the cursor passed their sequence. */
  arrivedAfterPlayout(p: PeerSim): number[] {
    const out: number[] = [];
    const seen = new Set<number>();
    for (const d of p.deliveries) {
      const passed = p.passTick.get(d.seq);
      if (passed !== undefined && passed < d.tick && !seen.has(d.seq)) out.push(d.seq);
      seen.add(d.seq);
    }
    return out;
  }
}

const constant = (d: number): DelayFn => () => [d];
const jitter = (rng: () => number, lo: number, hi: number): DelayFn => () => [lo + rng() * (hi - lo)];

describe('de-jitter ring: JitterWriter + Mixer on a virtual clock', () => {
  test('in order, constant delay: frame s plays exactly depth quanta after the first arrival, bit-exact', () => {
    for (const delay of [0, 1, 3, 2.5]) {
      const sim = new Sim(0);
      const s0 = 1000;
      const p = sim.addPeer({ delay: constant(delay), streamId: 5, firstSeq: s0 });
      sim.run(400);
      sim.assertClean(`constant delay ${delay}`);
      const arrive = Math.ceil(delay);
      // Tick t plays frame s0 + (t - arrive - depth); silence before that.
      p.output.forEach((id, t) => {
        const s = t - arrive - DEFAULT_DEPTH;
        assert.equal(id, s >= 0 ? frameId(s0 + s) : 0, `delay ${delay}, tick ${t}`);
      });
      assert.deepEqual({ ...p.writer.counters }, { received: 400 - arrive, recovered: 0, late: 0, duplicates: 0, resyncs: 0, stale: 0, resyncMissed: 0, resyncDiscarded: 0 });
      assert.equal(p.writer.playCounter(PEER_I32.MISSED), 0);
      assert.equal(p.writer.playCounter(PEER_I32.UNDERRUNS), 0);
      assert.equal(p.writer.playCounter(PEER_I32.CONCEALED), 0);
      assert.equal(p.writer.playCounter(PEER_I32.PLAYED), 400 - arrive - DEFAULT_DEPTH);
      assert.equal(p.writer.lastMarginFrames, DEFAULT_DEPTH * QUANTUM_FRAMES + HALF, 'each frame arrives depth quanta (+ the kernel look-ahead) ahead of playout');
    }
  });

  test('fill windows: the published low points are depth quanta + HALF frames in steady state', () => {
    const sim = new Sim(0);
    const p = sim.addPeer({ delay: constant(1), streamId: 5, firstSeq: 77 });
    const lows: number[] = [];
    sim.run(400, () => {
      for (let w = p.writer.nextFillWindow(); w !== null; w = p.writer.nextFillWindow()) lows.push(w);
    });
    sim.assertClean('fill windows');
    assert.ok(lows.length >= 20, `${lows.length} windows`);
    // The first window includes the start-up (cursor before the first frame); after it, exact.
    for (const low of lows.slice(1)) assert.equal(low, DEFAULT_DEPTH * QUANTUM_FRAMES + HALF);
  });

  test('reordered: random delay 0..5 quanta at depth 8 → nothing late, missed or underrun', () => {
    for (const seed of testSeeds([1, 2, 3, 0xc0ffee])) {
      const rng = mulberry32(seed);
      const sim = new Sim(seed);
      const p = sim.addPeer({ delay: jitter(rng, 0, 5), streamId: randInt(rng, 0, 255), firstSeq: randInt(rng, 0, 2 ** 31) });
      sim.run(3000);
      sim.assertClean('reordered');
      const msg = `seed ${seed}`;
      const reorders = p.deliveries.filter((d, i) => i > 0 && seqDiff(d.seq, p.deliveries[i - 1]!.seq) < 0).length;
      assert.ok(reorders > 100, `${msg}: the schedule barely reordered (${reorders})`);
      assert.equal(p.writer.counters.late, 0, msg);
      assert.equal(p.writer.counters.duplicates, 0, msg);
      assert.equal(p.writer.counters.resyncs, 0, msg);
      assert.equal(p.writer.playCounter(PEER_I32.MISSED), 0, msg);
      assert.equal(p.writer.playCounter(PEER_I32.UNDERRUNS), 0, msg);
      assert.ok(p.played.length > 2900, msg);
      p.played.forEach((x, i) => assert.equal(x.seq, seqAdd(p.played[0]!.seq, i), `${msg}: gap at tick ${x.tick}`));
    }
  });

  test('duplicated packets: counted as duplicates, each frame played once', () => {
    for (const seed of testSeeds([4, 5, 6])) {
      const rng = mulberry32(seed);
      const sim = new Sim(seed);
      let copies = 0;
      const p = sim.addPeer({
        streamId: 9,
        firstSeq: randInt(rng, 0, 2 ** 32 - 1),
        delay: () => {
          const d = [rng() * 5];
          // 20% of packets arrive twice, the copy up to 30 quanta behind (often after playout).
          while (rng() < 0.2) {
            d.push(rng() * 30);
            copies++;
          }
          return d;
        },
      });
      sim.run(2000);
      sim.assertClean('duplicates');
      const msg = `seed ${seed}`;
      const distinct = new Set(p.deliveries.map((d) => d.seq)).size;
      assert.ok(copies > 300, msg);
      // Every extra copy is a duplicate, except copies of frames from before the stream's first
      // arrival (stored but never due, so a copy after the cursor passed them is late).
      const beforeFirst = p.deliveries.filter((d) => d.got === Arrival.LATE);
      for (const d of beforeFirst) assert.ok(seqDiff(d.seq, p.model.first) < 0, `${msg}: seq ${d.seq} late`);
      assert.equal(p.writer.counters.duplicates + beforeFirst.length, p.deliveries.length - distinct, `${msg}: every extra copy delivered is a duplicate`);
      assert.ok(p.deliveries.some((d) => d.got === Arrival.DUPLICATE && (p.passTick.get(d.seq) ?? Infinity) < d.tick), `${msg}: no copy arrived after playout`);
      assert.equal(p.writer.counters.late, beforeFirst.length, `${msg}: a copy of a played frame is a duplicate, not late`);
      assert.equal(p.writer.counters.received + p.writer.counters.duplicates + p.writer.counters.late, p.deliveries.length, msg);
      assert.equal(p.writer.playCounter(PEER_I32.MISSED), 0, msg);
      assert.equal(p.playedSet.size, p.played.length, msg);
    }
  });

  test('late packets (delay > depth once the buffer is established): counted late, never played, concealed and MISSED', () => {
    for (const seed of testSeeds([7, 8, 9])) {
      const rng = mulberry32(seed);
      const sim = new Sim(seed);
      const lateDelays = new Map<number, number>();
      const p = sim.addPeer({
        streamId: 1,
        firstSeq: 500,
        delay: (seq, tick) => {
          if (tick > 0 && rng() < 0.05) {
            const d = 9 + 0.01 + rng() * 40; // playout is 1 + 8 quanta after sending
            lateDelays.set(seq, d);
            return [d];
          }
          return [1];
        },
      });
      sim.run(2000);
      sim.assertClean('late');
      const msg = `seed ${seed}`;
      const afterPlayout = sim.arrivedAfterPlayout(p);
      assert.ok(afterPlayout.length > 50, msg);
      assert.equal(p.writer.counters.late, afterPlayout.length, `${msg}: late counter vs frames that arrived after their playout tick`);
      for (const s of afterPlayout) {
        assert.ok(lateDelays.has(s), `${msg}: seq ${s} arrived after playout without a late delay`);
        assert.ok(!p.playedSet.has(s), `${msg}: late seq ${s} was played`);
      }
      // Every frame with a late delay that was due before the end was missed (concealed), in its own slot.
      const lateDue = [...lateDelays.keys()].filter((s) => p.passTick.has(s));
      assert.deepEqual(p.missedSeqs, lateDue, `${msg}: MISSED slots vs frames that came too late`);
      assert.equal(p.writer.playCounter(PEER_I32.CONCEALED), lateDue.length, `${msg}: each missed quantum is concealed`);
      assert.equal(p.writer.playCounter(PEER_I32.UNDERRUNS), 0, msg);
      assert.equal(p.writer.counters.resyncs, 0, msg);
    }
  });

  test('late boundary: a frame arriving in the tick of its playout plays, one arriving after does not', () => {
    // Playout of frame s is 1 + 8 quanta after it is sent (first packet delay 1, depth 8).
    const sim = new Sim(0);
    const p = sim.addPeer({ streamId: 2, firstSeq: 0, delay: (seq) => (seq === 20 ? [9] : seq === 30 ? [9.001] : seq === 40 ? [10] : [1]) });
    sim.run(100);
    sim.assertClean('late boundary');
    assert.ok(p.playedSet.has(20), 'delay 9 is exactly on time');
    assert.ok(!p.playedSet.has(30) && !p.playedSet.has(40));
    assert.equal(p.writer.counters.late, 2);
    assert.deepEqual(p.missedSeqs, [30, 40]);
    assert.equal(p.writer.playCounter(PEER_I32.MISSED), 2);
  });

  test('lost packets (5%): MISSED equals the frames dropped, CONCEALED counts them, nothing late', () => {
    for (const seed of testSeeds([10, 11, 12])) {
      const rng = mulberry32(seed);
      const sim = new Sim(seed);
      const p = sim.addPeer({ streamId: 77, firstSeq: randInt(rng, 0, 2 ** 32 - 1), delay: (_, tick) => (tick > 0 && rng() < 0.05 ? [] : [rng() * 4]) });
      sim.run(3000);
      sim.assertClean('lost');
      const msg = `seed ${seed}`;
      const droppedDue = p.dropped.filter((s) => p.passTick.has(s));
      assert.ok(droppedDue.length > 80, msg);
      assert.equal(p.writer.playCounter(PEER_I32.MISSED), droppedDue.length, `${msg}: MISSED vs dropped`);
      assert.deepEqual(p.missedSeqs, droppedDue, `${msg}: the missed slots are exactly the dropped frames`);
      assert.equal(p.writer.playCounter(PEER_I32.CONCEALED), droppedDue.length, `${msg}: CONCEALED (no run is longer than the fade)`);
      assert.equal(p.writer.counters.late, 0, msg);
      assert.equal(p.writer.counters.resyncs, 0, msg);
      assert.equal(p.writer.playCounter(PEER_I32.UNDERRUNS), 0, msg);
    }
  });

  test('sequence wrap: start at 2^32 − 100, 300 ticks, reordered → no late, no missed', () => {
    for (const seed of testSeeds([13, 14])) {
      const rng = mulberry32(seed);
      const sim = new Sim(seed);
      const p = sim.addPeer({ streamId: 3, firstSeq: 2 ** 32 - 100, delay: jitter(rng, 0, 5) });
      sim.run(300);
      sim.assertClean('wrap');
      const msg = `seed ${seed}`;
      assert.equal(p.writer.counters.late, 0, msg);
      assert.equal(p.writer.counters.resyncs, 0, msg);
      assert.equal(p.writer.playCounter(PEER_I32.MISSED), 0, msg);
      const seqs = p.played.map((x) => x.seq);
      const i = seqs.indexOf(0xffffffff);
      assert.ok(i >= 0 && seqs[i + 1] === 0, `${msg}: playout did not run through 0xffffffff → 0`);
      assert.ok(seqs.length > 270, msg);
    }
  });
});

describe('underruns and redundancy', () => {
  test('sender pauses: UNDERRUNS count, the cursor waits, nothing late or missed, every frame after the pause plays in order', () => {
    for (const pause of [DEFAULT_DEPTH + 2, DEFAULT_DEPTH + PLC_FADE_QUANTA, 40]) {
      const sim = new Sim(0);
      const p = sim.addPeer({ streamId: 4, firstSeq: 1000, delay: constant(1) });
      sim.run(600, (t) => {
        p.sending = !(t >= 200 && t < 200 + pause);
      });
      sim.assertClean(`pause ${pause}`);
      const msg = `pause of ${pause} quanta`;
      assert.ok(p.writer.playCounter(PEER_I32.UNDERRUNS) >= 1, `${msg}: no underrun`);
      assert.equal(p.writer.counters.late, 0, msg);
      assert.equal(p.writer.playCounter(PEER_I32.MISSED), 0, msg);
      assert.equal(p.writer.counters.resyncs, 0, msg);
      p.played.forEach((x, i) => assert.equal(x.seq, 1000 + i, `${msg}: tick ${x.tick}`));
      // Every render after the first arrival (tick 1) is a lead-in, a frame played or an underrun.
      assert.equal(p.played.length, 600 - 1 - DEFAULT_DEPTH - p.writer.playCounter(PEER_I32.UNDERRUNS), msg);
      // An outage longer than the concealment fade also rebuffers (up to the depth) before resuming.
      const rebuffer = pause > PLC_FADE_QUANTA ? DEFAULT_DEPTH : 0;
      assert.ok(p.played.length >= 600 - pause - 1 - DEFAULT_DEPTH - 1 - rebuffer, `${msg}: ${p.played.length} played`);
    }
  });

  test('after an outage longer than the concealment fade, playout rebuffers to the target depth before resuming', () => {
    // The documented behaviour (worklets/peer-playout.ts, pull: "Rebuffer after an outage"):
    // the first frame after a long pause must not play the moment it arrives with nothing
    // queued behind it, or every later jitter is an underrun again.
    const sim = new Sim(0);
    const p = sim.addPeer({ streamId: 4, firstSeq: 1000, delay: constant(1) });
    const pause = 40;
    sim.run(400, (t) => {
      p.sending = !(t >= 200 && t < 200 + pause);
    });
    const resumedSeq = 1000 + 200; // the first frame sent after the pause
    const arrived = p.firstDelivery.get(resumedSeq)!;
    const playedAt = p.played.find((x) => x.seq === resumedSeq)!.tick;
    assert.ok(
      playedAt - arrived >= DEFAULT_DEPTH - 1,
      `after a ${pause}-quantum outage, seq ${resumedSeq} arrived at tick ${arrived} and played at tick ${playedAt}: ` +
        `${playedAt - arrived} quanta of buffer instead of the target depth ${DEFAULT_DEPTH}`,
    );
  });

  test('redundancy 1 with 5% independent loss: lost frames are recovered; MISSED = only the double losses', () => {
    for (const seed of testSeeds([23, 24, 25])) {
      for (const reorder of [false, true]) {
        const rng = mulberry32(seed);
        const sim = new Sim(seed);
        const p = sim.addPeer({ streamId: 12, firstSeq: randInt(rng, 0, 2 ** 32 - 1), redundancy: 1, delay: (_, tick) => (tick > 0 && rng() < 0.05 ? [] : [reorder ? rng() * 5 : 1]) });
        sim.run(4000);
        sim.assertClean(`redundancy 1${reorder ? ', reordered' : ''}`);
        const msg = `seed ${seed}${reorder ? ', reordered' : ''}`;
        const dropped = new Set(p.dropped);
        const droppedDue = p.dropped.filter((s) => p.passTick.has(s));
        const doubles = droppedDue.filter((s) => dropped.has(seqAdd(s, 1)));
        assert.ok(droppedDue.length > 120, `${msg}: ${droppedDue.length} dropped`);
        assert.deepEqual(p.missedSeqs, doubles, `${msg}: missed vs frames whose successor was lost too`);
        assert.ok(doubles.length < droppedDue.length / 5, msg);
        for (const s of droppedDue) if (!dropped.has(seqAdd(s, 1))) assert.ok(p.playedSet.has(s), `${msg}: seq ${s} was lost, its copy arrived, but it did not play`);
        // A copy counts as recovered when the packet carrying it arrives, which for a frame dropped
        // near the end of the run can be before the frame's own slot is due (it is then not in droppedDue).
        const delivered = new Set(p.deliveries.map((d) => d.seq));
        const copiesArrived = p.dropped.filter((s) => !dropped.has(seqAdd(s, 1)) && delivered.has(seqAdd(s, 1))).length;
        if (!reorder) assert.equal(p.writer.counters.recovered, copiesArrived, `${msg}: recovered`);
        else assert.ok(p.writer.counters.recovered >= droppedDue.length - doubles.length, `${msg}: recovered (reordered packets count too)`);
        assert.equal(p.writer.counters.late, 0, msg);
      }
    }
  });

  test('redundancy 2: a double loss is recovered, a triple is not', () => {
    const lost = new Set([100, 101, 200, 201, 202]);
    const sim = new Sim(0);
    const p = sim.addPeer({ streamId: 1, firstSeq: 0, redundancy: 2, delay: (seq) => (lost.has(seq) ? [] : [1]) });
    sim.run(300);
    sim.assertClean('redundancy 2');
    assert.deepEqual(p.missedSeqs, [200]);
    assert.equal(p.writer.counters.recovered, 4);
    for (const s of [100, 101, 201, 202]) assert.ok(p.playedSet.has(s), `seq ${s}`);
  });
});

describe('resynchronisation', () => {
  test('peer restart (new stream id, new random sequence): one resync, new stream after depth quanta, no late storm', () => {
    for (const seed of testSeeds([15, 16, 17])) {
      const rng = mulberry32(seed);
      const sim = new Sim(seed);
      const s0 = randInt(rng, 0, 2 ** 32 - 1);
      const p = sim.addPeer({ streamId: 40, firstSeq: s0, delay: constant(2) });
      const restartAt = 200;
      const s1 = seqAdd(s0, 0x80000000 + randInt(rng, 0, 2 ** 20));
      sim.run(600, (t) => {
        if (t === restartAt) p.restart(41 + randInt(rng, 0, 200), s1);
      });
      sim.assertClean('restart');
      const msg = `seed ${seed}`;
      assert.equal(p.writer.counters.resyncs, 1, msg);
      assert.equal(p.writer.counters.late, 0, `${msg}: late storm`);
      assert.equal(p.writer.playCounter(PEER_I32.MISSED), 0, msg);
      // The first new frame arrives at restartAt + 2 and plays depth quanta later; silence between.
      const firstNew = p.played.find((x) => x.seq === s1);
      assert.equal(firstNew?.tick, restartAt + 2 + DEFAULT_DEPTH, msg);
      const lastOld = p.played.filter((x) => p.streamOf.get(x.seq) === 0).pop();
      assert.equal(lastOld?.tick, restartAt + 1, `${msg}: the old stream plays until the new one arrives`);
      for (let t = restartAt + 2; t < restartAt + 2 + DEFAULT_DEPTH; t++) assert.equal(p.output[t], 0, `${msg}: tick ${t}`);
      const after = p.played.filter((x) => x.tick >= restartAt + 2 + DEFAULT_DEPTH);
      after.forEach((x, i) => assert.equal(x.seq, seqAdd(s1, i), msg));
      assert.equal(after.length, 600 - (restartAt + 2 + DEFAULT_DEPTH), msg);
    }
  });

  /** The worklet starts (adopts the pending resync) only at tick `startAt`; delay 1, in order. */
  function lateStart(startAt: number): { sim: Sim; p: PeerSim; s0: number } {
    const sim = new Sim(0);
    const s0 = 3000;
    const p = sim.addPeer({ streamId: 8, firstSeq: s0, delay: constant(1) });
    sim.rendering = false;
    sim.run(400, (t) => {
      sim.rendering = t >= startAt;
    });
    return { sim, p, s0 };
  }

  test('resync adopted late: beyond PILED_BEYOND frames over the depth, playout starts at the target depth, like a timely resync; up to it the frames wait', () => {
    for (const startAt of [3, 1 + TRIM_EXCESS, 2 + PILED_BEYOND, 20, 50]) {
      const { sim, p, s0 } = lateStart(startAt);
      const msg = `worklet starts at tick ${startAt}`;
      // At tick startAt frames s0 .. s0 + startAt − 1 have arrived, the pending cursor is s0 − depth.
      const piledUp = startAt - 1 > PILED_BEYOND;
      // A timely resync plays each frame depth quanta after it arrives (margin depth × 128 + HALF
      // frames, see the constant-delay test). A start late by more than a burst's worth must give
      // the same margin, or the late start costs a quantum of jitter tolerance for good (nothing
      // steers it back here); up to that, what arrived is taken for a device period's burst
      // (frames, not time) and waits: the margin is that much higher.
      // (Waits of at most TRIM_EXCESS here: more is trimmed once it has lasted, which the
      // reference model does not follow; the trim tests below do.)
      const wait = piledUp ? DEFAULT_DEPTH : DEFAULT_DEPTH + startAt - 1;
      assert.equal(p.writer.lastMarginFrames, wait * QUANTUM_FRAMES + HALF, `${msg}: steady-state margin (frames)`);
      const cursor = piledUp ? s0 + startAt - 1 - DEFAULT_DEPTH : s0 - DEFAULT_DEPTH;
      const firstPlayed = p.played[0]!;
      assert.equal(firstPlayed.seq, Math.max(s0, cursor), msg);
      assert.equal(firstPlayed.tick, startAt + Math.max(0, s0 - cursor), `${msg}: plays after the silent lead-in, if any`);
      p.played.forEach((x, i) => assert.equal(x.seq, firstPlayed.seq + i, `${msg}: continuous`));
      assert.equal(p.writer.counters.resyncs, 0, msg);
      assert.equal(p.writer.playCounter(PEER_I32.MISSED), 0, msg);
      assert.equal(p.writer.playCounter(PEER_I32.UNDERRUNS), 0, msg);
      sim.assertClean(msg);
    }
  });

  test("a stream that starts with a device period's burst keeps its whole depth: the burst is not taken for a late start", () => {
    // The rig's sender hands its audio over in periods of 8 quanta, sent at once: every frame of
    // a period arrives with its last one. The first frame publishes the resync (cursor = first −
    // depth); the rest of the burst lands before the next render. Taken for a late start, the
    // cursor moved to newest − depth and each later period found the buffer at its low point a
    // burst short (an underrun on the rig's first late buffer, in a join's first second).
    const PERIOD = 8;
    for (const depth of [DEFAULT_DEPTH, 4, 12]) {
      const sim = new Sim(0);
      const s0 = 5000;
      const p = sim.addPeer({ streamId: 3, firstSeq: s0, depth, delay: (seq) => [PERIOD - 1 - (seqDiff(seq, s0) % PERIOD) + 0.5] });
      sim.run(400);
      const msg = `depth ${depth}`;
      // How long each period's first frame (the one that waited longest for its burst) waits in
      // the buffer before it plays, in quanta: the buffer's low point.
      const waits: number[] = [];
      for (const x of p.played) if (seqDiff(x.seq, s0) % PERIOD === 0) waits.push(x.tick - p.firstDelivery.get(x.seq)!);
      assert.ok(waits.length > 40, `${msg}: periods played (${waits.length})`);
      for (const w of waits) assert.equal(w, depth, `${msg}: every period's first frame waits the whole depth (${waits.slice(0, 8).join(', ')}, …)`);
      assert.equal(p.writer.playCounter(PEER_I32.UNDERRUNS), 0, msg);
      assert.equal(p.writer.playCounter(PEER_I32.MISSED), 0, msg);
      sim.assertClean(msg);
    }
  });

  test('resync adopted late: the frames the late start skipped are not counted late when their slots are reused', () => {
    for (const startAt of [20, 50]) {
      const { p } = lateStart(startAt);
      const msg = `worklet starts at tick ${startAt}`;
      assert.equal(p.writer.counters.late, 0, `${msg}: frames skipped by the late start (never due, nobody heard them) counted late`);
      assert.equal(p.writer.counters.received, 399, `${msg}: received (one per packet)`);
    }
  });

  test('restart with reordering: stragglers from the old stream do not resync back to it', () => {
    for (const seed of testSeeds([18, 19, 20])) {
      const rng = mulberry32(seed);
      const sim = new Sim(seed);
      const s0 = randInt(rng, 0, 2 ** 32 - 1);
      const restartAt = 200;
      const reorder = jitter(rng, 0, 5);
      // The old stream's last three packets take 4.5 quanta, the new stream's first takes none.
      const delay: DelayFn = (seq, tick) => (tick >= restartAt - 3 && tick < restartAt ? [4.5] : tick === restartAt ? [0] : reorder(seq, tick));
      const p = sim.addPeer({ streamId: 40, firstSeq: s0, delay });
      const s1 = seqAdd(s0, 0x80000000 + randInt(rng, 0, 2 ** 20));
      sim.run(600, (t) => {
        if (t === restartAt) p.restart(41 + randInt(rng, 0, 200), s1);
      });
      sim.assertClean('restart with stragglers');
      const msg = `seed ${seed} (rerun with TUTTI_SEED=${seed})`;
      const oldAfterNew = p.deliveries.filter((d) => d.streamIdx === 0 && d.tick >= (p.firstDelivery.get(s1) ?? Infinity));
      assert.ok(oldAfterNew.length > 0, `${msg}: the schedule has no old-stream stragglers after the restart`);
      assert.equal(p.writer.counters.resyncs, 1, msg);
      const firstNewIdx = p.deliveries.findIndex((d) => d.seq === s1);
      const stragglers = p.deliveries.slice(firstNewIdx).filter((d) => d.streamIdx === 0);
      assert.equal(p.writer.counters.stale, stragglers.length, `${msg}: stragglers are counted stale`);
      const newPlayed = p.played.filter((x) => p.streamOf.get(x.seq) === 1);
      assert.ok(newPlayed.length > 350, msg);
      newPlayed.forEach((x, i) => assert.equal(x.seq, seqAdd(newPlayed[0]!.seq, i), `${msg}: gap in the new stream at tick ${x.tick}`));
    }
  });

  test('sequence jump ahead (same stream id, > 64 ahead) resyncs that peer', () => {
    const sim = new Sim(0);
    const p = sim.addPeer({ streamId: 6, firstSeq: 100, delay: constant(1) });
    sim.run(300, (t) => {
      if (t === 150) p.restart(6, 100 + 150 + 100_000); // same id, the sender's counter jumped (beyond 10 s of frames)
    });
    sim.assertClean('jump');
    assert.equal(p.writer.counters.resyncs, 1);
    assert.equal(p.writer.counters.late, 0);
    assert.equal(p.writer.playCounter(PEER_I32.MISSED), 0);
    assert.equal(p.writer.counters.resyncMissed, 0, "a jump of 100 000: the sender's counter, not frames lost");
    assert.ok(p.playedSet.has(100_250) && p.playedSet.has(100_250 + 100));
  });

  test('a burst loss longer than the ring ends in a catch-up: the frames it passes over count missed; the last depth quanta and the packet\'s copy play on', () => {
    // Redundancy 1 (as at two quanta per packet, where each packet carries the pair's first): 80
    // packets in a row lost, then the next is 80 ahead of the waiting cursor: the writer resyncs
    // the same stream to `depth` quanta behind it. The frames before that never came (missed, at
    // the resync); those after are the new timeline's (the worklet misses the lost ones), and the
    // one before the new packet came in it as its copy: it plays. (Counted missed, a churn run
    // read one frame lost per resync beyond what the sender had dropped; and before the catch-up
    // the new timeline began with `depth` quanta of silence.)
    const sim = new Sim(0);
    const p = sim.addPeer({ streamId: 7, firstSeq: 1000, redundancy: 1, delay: (_, tick) => (tick >= 300 && tick < 380 ? [] : [1]) });
    // The heard flags of each render (a take's sidecar), read before the next one.
    const playout = (sim.mixer as unknown as { peers: { flags: number }[] }).peers[p.peer]!;
    const trimmedAt: number[] = [];
    sim.run(600, (t) => {
      if (t > 0 && (playout.flags & HeardFlag.TRIMMED) !== 0) trimmedAt.push(t - 1);
    });
    const c = p.writer.counters;
    assert.equal(c.resyncs, 1);
    assert.equal(c.resyncMissed, 80 - DEFAULT_DEPTH, 'passed over: the lost frames before the new cursor');
    assert.equal(c.resyncDiscarded, 0);
    assert.equal(p.writer.playCounter(PEER_I32.MISSED), DEFAULT_DEPTH - 1, 'the lost frames after the new cursor, but the copy');
    assert.ok(p.playedSet.has(1379) && p.playedSet.has(1380), 'the copy and the packet that carried it play');
    // The jump is flagged in the heard record (a take lists it as a trim), once: before, a band take
    // found unflagged jumps in a participant's heard track.
    assert.equal(trimmedAt.length, 1, `renders flagged trimmed: ${trimmedAt.join(', ')}`);
  });

  test('sequence jump backwards (same stream id): resync after RESYNC_AFTER_LATE late frames, each counted once', () => {
    const sim = new Sim(0);
    const p = sim.addPeer({ streamId: 6, firstSeq: 100_000, delay: constant(1) });
    sim.run(400, (t) => {
      if (t === 100) p.restart(6, 100_000 - 5000); // same id, the sender's counter went back
    });
    sim.assertClean('backward jump');
    assert.equal(p.writer.counters.resyncs, 1);
    assert.equal(p.writer.counters.late, RESYNC_AFTER_LATE - 1);
    assert.equal(p.writer.counters.received + p.writer.counters.late + p.writer.counters.duplicates, p.deliveries.length);
    assert.ok(p.playedSet.has(95_000 + RESYNC_AFTER_LATE - 1 + 50));
  });

  test('two peers: one restarts (and changes depth), the other is unaffected (0 missed, continuous)', () => {
    for (const seed of testSeeds([21, 22])) {
      const rng = mulberry32(seed);
      const sim = new Sim(seed);
      const a = sim.addPeer({ streamId: 10, firstSeq: randInt(rng, 0, 2 ** 32 - 1), delay: constant(2) });
      const b = sim.addPeer({ streamId: 10, firstSeq: randInt(rng, 0, 2 ** 32 - 1), delay: jitter(rng, 0, 5) });
      const aRestart = seqAdd(a.nextSeq, 0x80000000);
      sim.run(800, (t) => {
        if (t === 300) a.restart(11, aRestart);
        if (t === 500) a.setDepth(12); // a target change on A alone: steered by rate, not by holds
      });
      sim.assertClean('two peers');
      const msg = `seed ${seed}`;
      assert.equal(a.writer.counters.resyncs, 1, msg);
      assert.ok(a.playedSet.has(aRestart), msg);
      assert.equal(b.writer.counters.resyncs, 0, msg);
      assert.equal(b.writer.counters.late, 0, msg);
      assert.equal(b.writer.playCounter(PEER_I32.MISSED), 0, msg);
      assert.equal(b.writer.playCounter(PEER_I32.UNDERRUNS), 0, msg);
      // B plays one frame per quantum, consecutively, from its start to the end.
      const firstB = b.played[0]!;
      b.played.forEach((x, i) => {
        assert.equal(x.seq, seqAdd(firstB.seq, i), `${msg}: peer B seq at tick ${x.tick}`);
        assert.equal(x.tick, firstB.tick + i, `${msg}: peer B tick`);
      });
    }
  });
});

describe('rate steering through the playout FIFO', () => {
  /** One peer, in order, delay 1, carrying seeded noise (or `signal`); returns the output and the input stream. */
  function noiseRun(ticks: number, setup: (w: JitterWriter, t: number) => void, signal?: (i: number) => number, renders: (t: number) => boolean = () => true, arrives: (seq: number) => boolean = () => true): { out: Float32Array; input: Float32Array; w: JitterWriter; pos: number[]; v: PlaybackViews } {
    const v = new PlaybackViews(createPlaybackMemory());
    const mixer = new Mixer(v);
    const w = new JitterWriter(v, 0, DEFAULT_DEPTH);
    const rng = mulberry32(99);
    const input = new Float32Array(ticks * QUANTUM_FRAMES);
    for (let i = 0; i < input.length; i++) input[i] = Math.round((signal ? signal(i) : rng() - 0.5) * 20000) / 32768;
    const out = new Float32Array(ticks * QUANTUM_FRAMES);
    const src = new Float32Array(QUANTUM_SAMPLES);
    const outL = new Float32Array(QUANTUM_FRAMES);
    const outR = new Float32Array(QUANTUM_FRAMES);
    const h = newHeader();
    const bytes = new Uint8Array(MAX_PACKET_BYTES);
    const pos: number[] = [];
    for (let t = 0; t < ticks; t++) {
      if (t > 0 && arrives(t - 1)) {
        // Sent at tick t − 1, arrives at tick t.
        for (let f = 0; f < QUANTUM_FRAMES; f++) src[2 * f] = src[2 * f + 1] = input[(t - 1) * QUANTUM_FRAMES + f]!;
        const len = encodePacket(bytes, new DataView(bytes.buffer), src, 2, 1, t - 1, 0);
        const view = new DataView(bytes.buffer, 0, len);
        assert.equal(decodeHeader(view, h), Reject.OK);
        w.accept(h, view);
      }
      setup(w, t);
      if (!renders(t)) { // this machine's audio thread stalled: packets keep arriving, nothing plays
        pos.push(pos[pos.length - 1] ?? 0);
        continue;
      }
      mixer.render(outL, outR);
      out.set(outL, t * QUANTUM_FRAMES);
      pos.push(Atomics.load(v.i32, v.peerI32(0, PEER_I32.PLAY_POS)));
    }
    return { out, input, w, pos, v };
  }

  test('at rate 1 the output is the input, sample for sample (delay = (1 + depth) quanta + HALF frames)', () => {
    const ticks = 2000;
    const { out, input, w } = noiseRun(ticks, () => {});
    const lag = (1 + DEFAULT_DEPTH) * QUANTUM_FRAMES + HALF;
    for (let i = 0; i < lag; i++) assert.equal(out[i], 0, `sample ${i} before playout starts`);
    // Both channels carry the same sample: the mono output (outR === outL would add them) is L alone here.
    for (let i = lag; i < out.length; i++) if (out[i] !== input[i - lag]) assert.fail(`sample ${i}: ${out[i]} vs input ${input[i - lag]}`);
    assert.equal(w.playCounter(PEER_I32.MISSED) + w.playCounter(PEER_I32.UNDERRUNS), 0);
  });

  test('at rate 1.003 the buffer drains 0.3% of a quantum per quantum, without a glitch; back at 1 it holds', () => {
    const ticks = 3000;
    const steerFrom = 100;
    const steerTo = 1900;
    const { pos, w, out, input } = noiseRun(ticks, (wr, t) => {
      if (t === steerFrom) wr.setRate(1.003);
      if (t === steerTo) wr.setRate(1);
    });
    // After the slew (time constant 32 quanta) the read position advances 128 × 1.003 frames per quantum.
    const a = steerFrom + 300;
    const b = steerTo - 1;
    const speed = (pos[b]! - pos[a]!) / ((b - a) * QUANTUM_FRAMES);
    assert.ok(Math.abs(speed - 1.003) < 2e-5, `playout speed ${speed}, want 1.003`);
    // The sender is at 1: the queue shrank by ≈ 0.003 × 128 × 1800 ≈ 691 frames (5.4 quanta), still > 0.
    const drained = (pos[steerTo + 200]! - pos[steerFrom]!) - (steerTo + 200 - steerFrom) * QUANTUM_FRAMES;
    assert.ok(Math.abs(drained - 0.003 * QUANTUM_FRAMES * (steerTo - steerFrom)) < 0.003 * QUANTUM_FRAMES * 64, `drained ${drained} frames`);
    const late = pos.length - 1;
    const hold = (pos[late]! - pos[late - 500]!) / (500 * QUANTUM_FRAMES);
    assert.ok(Math.abs(hold - 1) < 1e-6, `back at rate 1: speed ${hold}`);
    // ... and bit-exact again: the read position landed on a whole frame (the last 500 quanta are
    // the input, sample for sample, at one whole-frame lag).
    const tail = out.length - 500 * QUANTUM_FRAMES;
    const lags: number[] = [];
    for (let lag = 0; lag < 40 * QUANTUM_FRAMES; lag++) if (out[tail] === input[tail - lag] && out[tail + 1] === input[tail + 1 - lag]) lags.push(lag);
    const exact = lags.find((lag) => out.subarray(tail).every((x, i) => x === input[tail + i - lag]));
    assert.notEqual(exact, undefined, `back at rate 1, the output is the input verbatim again (candidate lags ${lags.join(', ')})`);
    assert.equal(w.playCounter(PEER_I32.MISSED) + w.playCounter(PEER_I32.UNDERRUNS), 0, 'no glitch');
    // No dropout: every steered quantum carries the signal's power (white noise keeps ≈ 0.5 dB of
    // its power through the kernel, whose passband ends near Nyquist).
    const rms = (x: Float32Array) => Math.sqrt(x.reduce((a, y) => a + y * y, 0) / x.length);
    const inRms = rms(input);
    for (let t = steerFrom; t < steerTo + 100; t++) {
      const q = rms(out.subarray(t * QUANTUM_FRAMES, (t + 1) * QUANTUM_FRAMES));
      assert.ok(q > inRms * 0.6 && q < inRms * 1.4, `tick ${t}: quantum rms ${q} vs input ${inRms}`);
    }
  });

  test('a depth lowered by more than 4 quanta is reached by one trim after 8 fill windows, spliced without a step', () => {
    const ticks = 1500;
    const lowerAt = 300;
    // 406.25 Hz: the 6 quanta skipped (768 frames) are 6.5 periods, so the two timelines are in
    // antiphase at the splice, the worst case for a cut (the phase offset puts the splice near a crest).
    const sine = (i: number) => Math.sin((2 * Math.PI * 406.25 * i) / 48000 + 1.5);
    const { pos, w, out, input } = noiseRun(ticks, (wr, t) => {
      if (t === lowerAt) wr.setDepth(1);
    }, sine);
    // Low point at depth 8: 8 quanta + HALF frames → excess 7 over the new target → skip 6, leaving 1 over it.
    assert.equal(w.playCounter(PEER_I32.TRIMMED), 6);
    assert.equal(w.playCounter(PEER_I32.MISSED) + w.playCounter(PEER_I32.UNDERRUNS) + w.counters.late, 0, 'no glitch, nothing counted late');
    // When: within 8 windows (plus the one in progress) of the change.
    let jumpAt = -1;
    for (let t = lowerAt; t < ticks; t++) if (pos[t]! - pos[t - 1]! > 2 * QUANTUM_FRAMES) { jumpAt = t; break; }
    assert.ok(jumpAt > lowerAt && jumpAt <= lowerAt + 9 * 16 + 2, `trimmed at tick ${jumpAt}`);
    assert.equal(pos[ticks - 1]! - pos[lowerAt]! - (ticks - 1 - lowerAt) * QUANTUM_FRAMES, 6 * QUANTUM_FRAMES, 'the delay fell by 6 quanta');
    // No step. Before the trim the output is the input delayed by (1 + depth) quanta + HALF frames;
    // the splice starts where that stops, and a hard cut there would have jumped by `cut`.
    const lag = (1 + DEFAULT_DEPTH) * QUANTUM_FRAMES + HALF;
    let s0 = lag;
    while (out[s0] === input[s0 - lag]) s0++;
    const cut = Math.abs(input[s0 - lag + 6 * QUANTUM_FRAMES]! - out[s0 - 1]!);
    assert.ok(cut > 0.5, `the scenario must make a cut audible: ${cut}`);
    // The largest sample-to-sample change stays near the sine's own slope (0.6 × 2π × 406.25 / 48000 = 0.032);
    // the crossfade adds at most (π / 2) / 128 of the difference between the two timelines (≤ 1.2).
    let maxStep = 0;
    for (let i = lag + 1; i < out.length; i++) maxStep = Math.max(maxStep, Math.abs(out[i]! - out[i - 1]!));
    assert.ok(maxStep < 0.032 + (1.2 * Math.PI) / 2 / 128, `largest step ${maxStep}, a cut would have been ${cut}`);
  });

  test('a resync after a burst loss longer than the ring counts the frames it passed over: those that never came missed (lost), the rest discarded', () => {
    // Every fourth frame lost on the way, and then 80 in a row (213 ms): the playout waits on the
    // frame after the last it had, and the next to come is more than the ring ahead of it, so the
    // writer resyncs. Every frame up to the final cursor is then counted once: played, missed (by
    // the worklet or at the resync), discarded at the resync, or trimmed. Before, the resync's
    // were nowhere and the loss read low (a quarter of a lossy sender's frames read 24.0 % through
    // three resets in 10 s).
    const lost = (seq: number) => seq % 4 === 3 || (seq >= 300 && seq < 380);
    const { w, v } = noiseRun(1000, () => {}, undefined, () => true, (seq) => !lost(seq));
    const c = w.counters;
    assert.equal(c.resyncs, 1);
    const cursor = Atomics.load(v.i32, v.peerI32(0, PEER_I32.CURSOR));
    let dropped = 0;
    for (let s = 0; s < cursor; s++) if (lost(s)) dropped++;
    const missed = w.playCounter(PEER_I32.MISSED) + c.resyncMissed;
    assert.ok(c.resyncMissed >= 64, `passed over at the resync: ${c.resyncMissed} missed, ${c.resyncDiscarded} discarded`);
    assert.equal(missed, dropped, 'every lost frame below the cursor is missed once');
    assert.equal(w.playCounter(PEER_I32.TRIMMED), 0, 'no trim here: what follows the reset is at the target');
    assert.equal(w.playCounter(PEER_I32.PLAYED) + missed + c.resyncDiscarded, cursor, 'every frame below the cursor counted once');
    assert.equal(c.late, 0);
  });

  test('a stall of this audio thread: the sustained rule trims it to one over the target after 8 windows; TRIM_NOW at once, to the target', () => {
    const stallFrom = 400;
    const stallTicks = 12; // 32 ms: 12 quanta pile up
    const renders = (t: number) => t < stallFrom || t >= stallFrom + stallTicks;
    const sustained = noiseRun(1500, () => {}, undefined, renders);
    assert.equal(sustained.w.playCounter(PEER_I32.TRIMMED), stallTicks - 1);
    const asked = stallFrom + stallTicks + 40; // net follows our output's step ~0.1 s after the stall
    const now = noiseRun(1500, (wr, t) => {
      if (t === asked) wr.trimNow(stallTicks);
    }, undefined, renders);
    assert.equal(now.w.playCounter(PEER_I32.TRIMMED), stallTicks, 'the whole backlog: back to the target');
    let jumpAt = -1;
    for (let t = asked; t < 1500; t++) if (now.pos[t]! - now.pos[t - 1]! > 2 * QUANTUM_FRAMES) { jumpAt = t; break; }
    assert.ok(jumpAt > asked && jumpAt <= asked + 16 + 2, `trimmed at tick ${jumpAt}, asked at ${asked}: within a fill window`);
    assert.equal(now.w.playCounter(PEER_I32.MISSED) + now.w.playCounter(PEER_I32.UNDERRUNS) + now.w.counters.late, 0, 'no glitch but the trim');
    // Asked for less than the backlog: that much; asked with no backlog: nothing, and the request is taken.
    assert.equal(noiseRun(1000, (wr, t) => { if (t === asked) wr.trimNow(5); }, undefined, renders).w.playCounter(PEER_I32.TRIMMED), 5 + (stallTicks - 5 - 1));
    const idle = noiseRun(600, (wr, t) => { if (t === 300) wr.trimNow(12); });
    assert.equal(idle.w.playCounter(PEER_I32.TRIMMED), 0);
    assert.equal(Atomics.load(idle.v.i32, idle.v.peerI32(0, PEER_I32.TRIM_NOW)), 0, 'the request was taken');
  });

  test('TRIM_NOW stays asked for TRIM_NOW_WINDOWS windows: backlog that shows after the first trim goes too, up to the quanta asked', () => {
    // The first part of the backlog (8 quanta) is there when the first window closes; 4 more pile
    // up 30 ticks later (audio that waited through the stall still arriving, modelled as a second
    // short stall of the output). A loaded run trimmed 8 of a 10-quantum stall and drained the rest
    // by rate over 1.5 s, the one-way delay falling with it.
    const renders = (t: number) => !(t >= 400 && t < 408) && !(t >= 440 && t < 444);
    const asked = 410;
    const run = noiseRun(1200, (wr, t) => { if (t === asked) wr.trimNow(12); }, undefined, renders);
    assert.ok(30 < TRIM_NOW_WINDOWS * 16, 'the second part within the windows the request stays');
    assert.equal(run.w.playCounter(PEER_I32.TRIMMED), 12, 'both parts: back to the target');
    assert.equal(run.w.playCounter(PEER_I32.MISSED) + run.w.playCounter(PEER_I32.UNDERRUNS) + run.w.counters.late, 0, 'no glitch but the trims');
    // Never more than asked: a budget of 9 takes 8, then 1 of the 4.
    const less = noiseRun(1200, (wr, t) => { if (t === asked) wr.trimNow(9); }, undefined, renders);
    assert.equal(less.w.playCounter(PEER_I32.TRIMMED), 9);
  });

  test('a stall trim goes back to the level the stall interrupted, not below it: a level over the target and a request larger than the backlog', () => {
    // The target lowered by 3 long before (the rate would drain that; nothing steers it here), so
    // the level sits 3 quanta over the target; then a 12-quantum stall, and net asks for 15 (our
    // output's step can be larger than the backlog that arrived). Before, the trim went to the
    // target: 15 trimmed, the delay 3 quanta under where it was (a leader-mode run: the one-way
    // delay 74.5 ms, 74.0 after the trim, 66.2 a moment later, a strike 7.9 ms early).
    const stallFrom = 400;
    const stallTicks = 12;
    const renders = (t: number) => t < stallFrom || t >= stallFrom + stallTicks;
    const asked = stallFrom + stallTicks + 40;
    const run = noiseRun(1500, (wr, t) => {
      if (t === 100) wr.setDepth(DEFAULT_DEPTH - 3);
      if (t === asked) wr.trimNow(stallTicks + 3);
    }, undefined, renders);
    assert.equal(run.w.playCounter(PEER_I32.TRIMMED), stallTicks, 'the backlog, and not the 3 quanta over the target it sat at before');
    const before = run.pos[stallFrom - 1]! - (stallFrom - 1) * QUANTUM_FRAMES;
    const after = run.pos[1499]! - 1499 * QUANTUM_FRAMES + stallTicks * QUANTUM_FRAMES;
    assert.equal(after - before, stallTicks * QUANTUM_FRAMES, 'the delay back to what it was before the stall');
    assert.equal(run.w.playCounter(PEER_I32.MISSED) + run.w.playCounter(PEER_I32.UNDERRUNS) + run.w.counters.late, 0, 'no glitch but the trim');
  });

  test('a stall trim goes back to a level that sat under the target, to the nearest quantum: not one quantum above it', () => {
    // The target raised by 1 long before (nothing steers the level up here), so the low point sits
    // half a quantum under the target; then a 12-quantum stall and a request for 12. Before, the
    // excess over the target was floored (11) and the floor was the target: 11 trimmed, the delay
    // a quantum over where it was after every stall (a leader-mode run: lows 11.7 at target 12,
    // 23.7 after the stall, 12.7 after the trim, the one-way delay 70.7 ms before and 73.4 after).
    const stallFrom = 400;
    const stallTicks = 12;
    const renders = (t: number) => t < stallFrom || t >= stallFrom + stallTicks;
    const asked = stallFrom + stallTicks + 40;
    const run = noiseRun(1500, (wr, t) => {
      if (t === 100) wr.setDepth(DEFAULT_DEPTH + 1);
      if (t === asked) wr.trimNow(stallTicks);
    }, undefined, renders);
    assert.equal(run.w.playCounter(PEER_I32.TRIMMED), stallTicks, 'the whole backlog, though the level ends under the target');
    const before = run.pos[stallFrom - 1]! - (stallFrom - 1) * QUANTUM_FRAMES;
    const after = run.pos[1499]! - 1499 * QUANTUM_FRAMES + stallTicks * QUANTUM_FRAMES;
    assert.equal(after - before, stallTicks * QUANTUM_FRAMES, 'the delay back to what it was before the stall');
    assert.equal(run.w.playCounter(PEER_I32.MISSED) + run.w.playCounter(PEER_I32.UNDERRUNS) + run.w.counters.late, 0, 'no glitch but the trim');
  });

  test('a stall trim does not keep a level far under the target: it leaves target − STALL_TRIM_DEFICIT, and the rest of the backlog refills the deficit', () => {
    // The target raised by 5 long before (nothing steers the level up here), so the level sits
    // 4.5 quanta under it, as a buffer the sender's capture left short does while the rate, at
    // most 0.5 %, refills it; then a 12-quantum stall and a request for 12. Going back to that
    // level (all 12 trimmed) kept the deficit, and a machine that stalls every second or so never
    // got out of it (a CI run: 1-5 quanta at target 8 for 15 s, the rate pinned, 79 underruns).
    const stallFrom = 400;
    const stallTicks = 12;
    const raise = 5;
    const renders = (t: number) => t < stallFrom || t >= stallFrom + stallTicks;
    const asked = stallFrom + stallTicks + 40;
    const run = noiseRun(1500, (wr, t) => {
      if (t === 100) wr.setDepth(DEFAULT_DEPTH + raise);
      if (t === asked) wr.trimNow(stallTicks);
    }, undefined, renders);
    // Low point before: DEFAULT_DEPTH quanta + HALF frames; after the stall, 12 more. Kept: at
    // least target − 1 = DEFAULT_DEPTH + 4 quanta, so round(12 + HALF / 128 − 4) = 8 go.
    const want = stallTicks - (raise - STALL_TRIM_DEFICIT) + Math.round(HALF / QUANTUM_FRAMES);
    assert.equal(run.w.playCounter(PEER_I32.TRIMMED), want, 'the backlog over target − 1, not all of it');
    const before = run.pos[stallFrom - 1]! - (stallFrom - 1) * QUANTUM_FRAMES;
    const after = run.pos[1499]! - 1499 * QUANTUM_FRAMES + stallTicks * QUANTUM_FRAMES;
    // `after` adds back the stall's quanta, as if all were trimmed; the untrimmed rest is the delay's rise.
    assert.equal(stallTicks * QUANTUM_FRAMES - (after - before), (stallTicks - want) * QUANTUM_FRAMES, 'the delay rose by what the trim left: the deficit refilled');
    assert.equal(run.w.playCounter(PEER_I32.MISSED) + run.w.playCounter(PEER_I32.UNDERRUNS) + run.w.counters.late, 0, 'no glitch but the trim');
  });

  test('a stall trim goes back to the level before the stall with TRIM_ABOVE raised too: the recurring step\'s excess is no floor for it', () => {
    // The devices' rhythm raised TRIM_ABOVE to 9 (the bench rig's recurring step); the level sits at
    // the target when a 12-quantum stall piles up its backlog and net asks for 12. With the floor
    // target + TRIM_ABOVE the trim took 3 and left 9 quanta to the rate (a 55 ms stop of the rig's
    // sound server: ~13 quanta over the level held, drained at +0.5 % for ~7 s).
    const stallFrom = 400;
    const stallTicks = 12;
    const renders = (t: number) => t < stallFrom || t >= stallFrom + stallTicks;
    const asked = stallFrom + stallTicks + 40;
    const run = noiseRun(1500, (wr, t) => {
      if (t === 100) wr.setTrimAbove(9);
      if (t === asked) wr.trimNow(stallTicks);
    }, undefined, renders);
    assert.equal(run.w.playCounter(PEER_I32.TRIMMED), stallTicks, 'the whole backlog');
    const before = run.pos[stallFrom - 1]! - (stallFrom - 1) * QUANTUM_FRAMES;
    const after = run.pos[1499]! - 1499 * QUANTUM_FRAMES + stallTicks * QUANTUM_FRAMES;
    assert.equal(after - before, stallTicks * QUANTUM_FRAMES, 'the delay back to what it was before the stall');
    assert.equal(run.w.playCounter(PEER_I32.MISSED) + run.w.playCounter(PEER_I32.UNDERRUNS) + run.w.counters.late, 0, 'no glitch but the trim');
  });

  test('a depth lowered by 4 quanta or less is not trimmed (the rate controller drains it)', () => {
    const { w } = noiseRun(1200, (wr, t) => {
      if (t === 100) wr.setDepth(DEFAULT_DEPTH - 4);
    });
    assert.equal(w.playCounter(PEER_I32.TRIMMED), 0);
  });

  test('with TRIM_ABOVE raised (the devices step the buffer by a period), that much excess is left to the rate', () => {
    const { w } = noiseRun(1500, (wr, t) => {
      if (t === 100) wr.setTrimAbove(8);
      if (t === 300) wr.setDepth(1); // excess 7: trimmed after 8 windows with TRIM_ABOVE at 0 (above)
    });
    assert.equal(w.playCounter(PEER_I32.TRIMMED), 0);
  });

  test('a rate outside 1 ± MAX_RATE_DEVIATION (or NaN) is clamped', () => {
    for (const [rate, want] of [[1.5, 1 + MAX_RATE_DEVIATION], [0, 1 - MAX_RATE_DEVIATION], [Number.NaN, 1 - MAX_RATE_DEVIATION]] as const) {
      const { pos } = noiseRun(1200, (wr, t) => {
        if (t === 10) wr.setRate(rate);
      });
      const speed = (pos[1100]! - pos[600]!) / (500 * QUANTUM_FRAMES);
      assert.ok(Math.abs(speed - want) < 2e-5, `rate ${rate}: speed ${speed}, want ${want}`);
    }
  });
});

describe('peer slot lifecycle, gain and mute', () => {
  test('release(): after one render the slot is FREE and findFreePeer returns it; it can be reused', () => {
    const sim = new Sim(0);
    const p = sim.addPeer({ streamId: 1, firstSeq: 0, delay: constant(1) });
    const other = new JitterWriter(sim.v, 1, 8);
    assert.equal(findFreePeer(sim.v, MAX_PEERS), 2);
    sim.run(50);
    sim.assertClean('before release');
    assert.ok(sim.outL.some((x) => x !== 0));
    p.writer.release();
    p.sending = false;
    sim.inflight = [];
    assert.equal(Atomics.load(sim.v.i32, sim.v.peerI32(0, PEER_I32.STATE)), PeerState.CLOSING);
    assert.equal(findFreePeer(sim.v, MAX_PEERS), 2, 'a CLOSING slot is not free yet');
    assert.throws(() => new JitterWriter(sim.v, 0, 8), /not free/);
    sim.mixer.render(sim.outL, sim.outR);
    assert.equal(Atomics.load(sim.v.i32, sim.v.peerI32(0, PEER_I32.STATE)), PeerState.FREE);
    assert.ok(sim.outL.every((x) => x === 0), 'a closing peer is not mixed');
    assert.equal(findFreePeer(sim.v, MAX_PEERS), 0);
    assert.equal(findFreePeer(sim.v, 1), 0);
    other.release();
    sim.mixer.render(sim.outL, sim.outR);
    assert.equal(findFreePeer(sim.v, MAX_PEERS), 0);

    // Reuse slot 0 (same memory, same mixer) for a new peer at depth 4: fresh counters, and it
    // plays from its own first frame after depth quanta (no leftovers of the old peer's FIFO).
    const w = new JitterWriter(sim.v, 0, 4);
    assert.equal(w.playCounter(PEER_I32.PLAYED), 0);
    assert.equal(w.playCounter(PEER_I32.FILL_COUNT), 0);
    const h = newHeader();
    const src = new Float32Array(QUANTUM_SAMPLES);
    const outs: number[] = [];
    for (let t = 0; t < 20; t++) {
      const seq = 9000 + t;
      src.fill(frameId(seq) / 32768);
      const bytes = new Uint8Array(MAX_PACKET_BYTES);
      const len = encodePacket(bytes, new DataView(bytes.buffer), src, 2, 200, seq, 0);
      const view = new DataView(bytes.buffer, 0, len);
      assert.equal(decodeHeader(view, h), Reject.OK);
      assert.equal(w.accept(h, view), t === 0 ? Arrival.RESYNC : Arrival.ON_TIME);
      sim.mixer.render(sim.outL, sim.outR);
      if (t < 4) assert.ok(sim.outL.every((x) => x === 0), `tick ${t}: silent before the first frame`);
      outs.push(sim.outL[PROBE]! * 32768);
    }
    assert.deepEqual(outs, [0, 0, 0, 0, ...Array.from({ length: 16 }, (_, i) => frameId(9000 + i))]);
    assert.equal(w.playCounter(PEER_I32.PLAYED), 16);
    assert.equal(w.playCounter(PEER_I32.MISSED), 0);
  });

  test('gain 0.5 halves the output (after a one-quantum ramp); mute gives silence; unmute restores', () => {
    const sim = new Sim(0);
    const p = sim.addPeer({ streamId: 1, firstSeq: 100, delay: constant(1) });
    const frameAt = (t: number) => 100 + t - 1 - DEFAULT_DEPTH;
    sim.run(30);
    // Output frame f of tick t: the last HALF frames of the previous quantum, then this one's.
    const full = (t: number, f: number) => frameId(frameAt(t) - (f < HALF ? 1 : 0)) / 32768;
    const check = (want: (t: number, f: number) => number, what: string) => {
      const t = sim.now;
      sim.tick();
      for (let f = 0; f < QUANTUM_FRAMES; f++) {
        assert.equal(sim.outL[f], Math.fround(want(t, f)), `${what}, tick ${t}, frame ${f}`);
        assert.equal(sim.outR[f], 0, `${what}: right channel`);
      }
    };
    check((t, f) => full(t, f), 'unity gain');
    p.writer.setGain(0.5);
    // Ramp quantum: from 1 toward 0.5 across the quantum, reaching it on the last frame.
    const t0 = sim.now;
    sim.tick();
    for (let f = HALF + 1; f < QUANTUM_FRAMES; f++) assert.ok(sim.outL[f]! < sim.outL[f - 1]!, `ramp is monotonic at frame ${f}`);
    assert.ok(Math.abs(sim.outL[QUANTUM_FRAMES - 1]! - full(t0, QUANTUM_FRAMES - 1) * 0.5) < 1e-7);
    assert.ok(sim.outL[HALF]! < full(t0, HALF) && sim.outL[HALF]! > full(t0, HALF) * 0.5);
    check((t, f) => full(t, f) * 0.5, 'gain 0.5');
    check((t, f) => full(t, f) * 0.5, 'gain 0.5');
    const playedBefore = p.writer.playCounter(PEER_I32.PLAYED);
    p.writer.setMuted(true);
    sim.tick(); // ramp to 0
    assert.equal(sim.outL[QUANTUM_FRAMES - 1], 0);
    check(() => 0, 'muted');
    check(() => 0, 'muted');
    assert.equal(p.writer.playCounter(PEER_I32.PLAYED), playedBefore + 3, 'muted frames are still consumed');
    assert.equal(p.writer.playCounter(PEER_I32.MISSED), 0);
    p.writer.setMuted(false);
    p.writer.setGain(1);
    sim.tick(); // ramp up
    check((t, f) => full(t, f), 'unmuted');
    p.writer.setGain(9); // clamped to 4
    assert.equal(sim.v.f32[sim.v.peerF32(0, PEER_F32.GAIN)], 4);
    sim.v.f32[PLAY_F32.MASTER_GAIN] = 0.25;
    sim.tick(); // ramp to 4
    check((t, f) => full(t, f) * 4 * 0.25, 'gain 4, master 0.25');
  });
});
