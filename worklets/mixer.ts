// Playback-worklet side of the de-jitter rings: each render quantum, plays every active peer's
// frame for its cursor (or silence), applies per-peer gain and mute, sums, and publishes
// counters and meters. Real-time code: all state is preallocated, render() allocates nothing.
// Imported by worklets/playback.worklet.ts; unit-tested in Node.

import { MAX_PEERS, METER_DECAY_PER_QUANTUM as METER_DECAY, QUANTUM_FRAMES } from '../src/shared/constants.ts';
import { PEER_F32, PEER_I32, PLAY_F32, PLAY_I32, PeerState, PlaybackViews, slotOf } from '../src/shared/memory-layout.ts';
import { seqDiff } from '../src/shared/seq.ts';

export class Mixer {
  private readonly cursor = new Uint32Array(MAX_PEERS);
  private readonly first = new Uint32Array(MAX_PEERS);
  private readonly ackGen = new Int32Array(MAX_PEERS);
  private readonly depth = new Int32Array(MAX_PEERS);
  private readonly started = new Uint8Array(MAX_PEERS);
  private readonly lastGain = new Float32Array(MAX_PEERS);
  private masterPeak = 0;
  private clipped = 0;
  private quanta = 0;

  constructor(private readonly v: PlaybackViews) {
    for (let p = 0; p < MAX_PEERS; p++) this.ackGen[p] = Atomics.load(v.i32, v.peerI32(p, PEER_I32.RESYNC_GEN));
  }

  /** Render one quantum into `outL`/`outR` (QUANTUM_FRAMES each); `outR` may equal `outL` for mono output. */
  render(outL: Float32Array, outR: Float32Array): void {
    const v = this.v;
    const i32 = v.i32;
    const f32 = v.f32;
    outL.fill(0);
    if (outR !== outL) outR.fill(0);
    for (let p = 0; p < MAX_PEERS; p++) {
      const stateIdx = v.peerI32(p, PEER_I32.STATE);
      const state = Atomics.load(i32, stateIdx);
      if (state === PeerState.FREE) continue;
      if (state === PeerState.CLOSING) {
        this.started[p] = 0;
        this.ackGen[p] = Atomics.load(i32, v.peerI32(p, PEER_I32.RESYNC_GEN));
        this.lastGain[p] = 0;
        f32[v.peerF32(p, PEER_F32.PEAK)] = 0;
        Atomics.compareExchange(i32, stateIdx, PeerState.CLOSING, PeerState.FREE);
        continue;
      }
      this.adoptResync(p);
      if (this.started[p] === 0) continue;

      // Walk the applied depth one quantum at a time toward the target.
      const target = Atomics.load(i32, v.peerI32(p, PEER_I32.TARGET_DEPTH));
      if (target > this.depth[p]!) {
        this.depth[p]!++;
        Atomics.store(i32, v.peerI32(p, PEER_I32.DEPTH), this.depth[p]!);
        continue; // hold: the cursor waits one quantum, so every later frame plays one quantum later
      }
      let cursor = this.cursor[p]!;
      if (target < this.depth[p]!) {
        this.depth[p]!--;
        Atomics.store(i32, v.peerI32(p, PEER_I32.DEPTH), this.depth[p]!);
        // Drop the frame under the cursor. Mark it taken only if it is really there: a frame that
        // arrives after its slot was skipped is late, not a duplicate.
        const skippedSlot = slotOf(cursor);
        if (Atomics.load(i32, v.tag(p, skippedSlot)) === (cursor | 0)) Atomics.store(i32, v.taken(p, skippedSlot), cursor | 0);
        Atomics.add(i32, v.peerI32(p, PEER_I32.SKIPPED), 1);
        cursor = (cursor + 1) >>> 0;
      }

      const slot = slotOf(cursor);
      const gainTarget = Atomics.load(i32, v.peerI32(p, PEER_I32.MUTED)) !== 0 ? 0 : f32[v.peerF32(p, PEER_F32.GAIN)]!;
      if (Atomics.load(i32, v.tag(p, slot)) === (cursor | 0)) {
        // The tag load above makes the worker's sample writes visible (it stored the tag after them).
        let g = this.lastGain[p]!;
        const step = (gainTarget - g) / QUANTUM_FRAMES;
        let base = v.samples(p, slot);
        let peak = 0;
        for (let f = 0; f < QUANTUM_FRAMES; f++) {
          g += step;
          const l = f32[base]! * g;
          const r = f32[base + 1]! * g;
          base += 2;
          outL[f]! += l;
          if (outR !== outL) outR[f]! += r;
          else outL[f]! += r;
          const a = l > 0 ? l : -l;
          const b = r > 0 ? r : -r;
          if (a > peak) peak = a;
          if (b > peak) peak = b;
        }
        Atomics.store(i32, v.taken(p, slot), cursor | 0);
        Atomics.add(i32, v.peerI32(p, PEER_I32.PLAYED), 1);
        const pk = v.peerF32(p, PEER_F32.PEAK);
        f32[pk] = Math.max(peak, f32[pk]! * METER_DECAY);
      } else {
        if (seqDiff(cursor, this.first[p]!) >= 0) Atomics.add(i32, v.peerI32(p, PEER_I32.MISSED), 1);
        const pk = v.peerF32(p, PEER_F32.PEAK);
        f32[pk] = f32[pk]! * METER_DECAY;
      }
      this.lastGain[p] = gainTarget;
      cursor = (cursor + 1) >>> 0;
      this.cursor[p] = cursor;
      Atomics.store(i32, v.peerI32(p, PEER_I32.CURSOR), cursor | 0);
    }
    this.finishMaster(outL, outR);
  }

  /**
   * Adopt a resync the worker published. Seqlock on RESYNC_GEN: odd means the worker is writing the
   * fields; a changed value after reading them means they may be mixed. Either way keep the current
   * timeline for this quantum and try again at the next one (never spin on the audio thread).
   */
  private adoptResync(p: number): void {
    const v = this.v;
    const i32 = v.i32;
    const genIdx = v.peerI32(p, PEER_I32.RESYNC_GEN);
    const gen = Atomics.load(i32, genIdx);
    if (gen === this.ackGen[p] || (gen & 1) !== 0) return;
    const cursor = Atomics.load(i32, v.peerI32(p, PEER_I32.RESYNC_CURSOR)) >>> 0;
    const first = Atomics.load(i32, v.peerI32(p, PEER_I32.RESYNC_FIRST)) >>> 0;
    if (Atomics.load(i32, genIdx) !== gen) return;
    this.cursor[p] = cursor;
    this.first[p] = first;
    this.depth[p] = seqDiff(first, cursor);
    this.started[p] = 1;
    this.ackGen[p] = gen;
    Atomics.store(i32, v.peerI32(p, PEER_I32.DEPTH), this.depth[p]!);
    Atomics.store(i32, v.peerI32(p, PEER_I32.CURSOR), cursor | 0);
    Atomics.store(i32, v.peerI32(p, PEER_I32.ACK_GEN), gen);
  }

  private finishMaster(outL: Float32Array, outR: Float32Array): void {
    const v = this.v;
    const f32 = v.f32;
    const master = f32[PLAY_F32.MASTER_GAIN]!;
    let peak = 0;
    let clipped = 0;
    const chans = outR === outL ? 1 : 2;
    for (let c = 0; c < chans; c++) {
      const out = c === 0 ? outL : outR;
      for (let f = 0; f < QUANTUM_FRAMES; f++) {
        let x = out[f]! * master;
        const a = x > 0 ? x : -x;
        if (a > peak) peak = a;
        // Full scale: the sum is left untouched below 0 dBFS and hard-clipped above it (counted,
        // shown as the clip light). No limiter: it would change the players' dynamics.
        if (x > 1) { x = 1; clipped++; } else if (x < -1) { x = -1; clipped++; }
        out[f] = x;
      }
    }
    this.masterPeak = Math.max(peak, this.masterPeak * METER_DECAY);
    f32[PLAY_F32.MASTER_PEAK] = this.masterPeak;
    if (clipped > 0) {
      this.clipped += clipped;
      Atomics.store(v.i32, PLAY_I32.CLIPPED, this.clipped);
    }
    Atomics.store(v.i32, PLAY_I32.QUANTA, ++this.quanta);
  }
}
