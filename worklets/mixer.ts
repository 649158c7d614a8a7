// Playback worklet: mixes every remote peer. Each render quantum, each active peer's PeerPlayout
// (peer-playout.ts: the reading side of its de-jitter ring) renders that peer's quantum; the mixer
// applies per-peer gain and mute (ramped over the quantum), sums, frees the slots the network
// worker released, and publishes the meters, the clip count, the quanta rendered and the context frame they started at.
// While a take records, it hands each peer's quantum and the mix to the heard writer (heard-writer.ts).
// Real-time code: all state is preallocated, render() allocates nothing.
// Imported by worklets/playback.worklet.ts; unit-tested in Node.

import { MAX_PEERS, METER_DECAY_PER_QUANTUM as METER_DECAY, QUANTUM_FRAMES } from '../src/shared/constants.ts';
import { PEER_F32, PEER_I32, PLAY_F32, PLAY_I32, PeerState, PlaybackViews } from '../src/shared/memory-layout.ts';
import { HeardWriter } from './heard-writer.ts';
import { FIFO_FRAMES, PeerPlayout, PlayoutShared } from './peer-playout.ts';

/**
 * Concealment fits allowed per render quantum across all peers (a fit runs when a peer's gap
 * starts): FULL fits (about 0.5 ms each, stereo, on this machine), then LIGHT ones (about
 * 55 µs); gaps beyond both start silent. Bounds the worst case, everyone losing the same
 * quantum, to about 0.9 ms of the 2.67 ms quantum (`npm run bench`, concealment CPU table).
 */
const MAX_FULL_FITS_PER_QUANTUM = 1;
const MAX_LIGHT_FITS_PER_QUANTUM = 6;

export class Mixer {
  private readonly peers: PeerPlayout[] = [];
  private readonly shared = new PlayoutShared();
  private readonly lastGain = new Float32Array(MAX_PEERS);
  /** One peer's quantum before gain (doubles, as the interpolation computes it). */
  private readonly peerL = new Float64Array(QUANTUM_FRAMES);
  private readonly peerR = new Float64Array(QUANTUM_FRAMES);
  private masterPeak = 0;
  private clipped = 0;
  private quanta = 0;
  /** Context frame of the render in progress (startsAt). */
  private frame = 0;
  /** While a take records: each rendered peer's quantum and the mix, to the recorder worker. */
  readonly heard = new HeardWriter();

  constructor(private readonly v: PlaybackViews) {
    const store = new Float32Array(MAX_PEERS * FIFO_FRAMES * 2);
    for (let p = 0; p < MAX_PEERS; p++) this.peers.push(new PeerPlayout(v, p, store.subarray(p * FIFO_FRAMES * 2, (p + 1) * FIFO_FRAMES * 2), this.shared));
  }

  /**
   * Before each render(): the context frame it starts at (`currentFrame`). Publishes where render
   * number 0 would have started (PLAY_I32.FRAME_BASE), so the network worker can tell the context
   * frame of any render from the quanta counter alone.
   */
  startsAt(frame: number): void {
    this.frame = frame;
    Atomics.store(this.v.i32, PLAY_I32.FRAME_BASE, (frame - QUANTUM_FRAMES * this.quanta) | 0);
  }

  /** Render one quantum into `outL`/`outR` (QUANTUM_FRAMES each); `outR` may equal `outL` for mono output. */
  render(outL: Float32Array, outR: Float32Array): void {
    const v = this.v;
    const i32 = v.i32;
    const f32 = v.f32;
    outL.fill(0);
    if (outR !== outL) outR.fill(0);
    this.shared.fullFitsLeft = MAX_FULL_FITS_PER_QUANTUM;
    this.shared.lightFitsLeft = MAX_LIGHT_FITS_PER_QUANTUM;
    const pl = this.peerL;
    const pr = this.peerR;
    const recording = this.heard.begin(this.quanta, this.frame);
    for (let p = 0; p < MAX_PEERS; p++) {
      const stateIdx = v.peerI32(p, PEER_I32.STATE);
      const state = Atomics.load(i32, stateIdx);
      if (state === PeerState.FREE) continue;
      if (state === PeerState.CLOSING) {
        this.peers[p]!.close();
        this.lastGain[p] = 0;
        f32[v.peerF32(p, PEER_F32.PEAK)] = 0;
        Atomics.compareExchange(i32, stateIdx, PeerState.CLOSING, PeerState.FREE);
        continue;
      }
      const playout = this.peers[p]!;
      if (!playout.render(pl, pr)) continue;
      if (recording) this.heard.addPeer(Atomics.load(i32, v.peerI32(p, PEER_I32.TRACK)), playout.flags, pl, pr);

      const gainTarget = Atomics.load(i32, v.peerI32(p, PEER_I32.MUTED)) !== 0 ? 0 : f32[v.peerF32(p, PEER_F32.GAIN)]!;
      let g = this.lastGain[p]!;
      const step = (gainTarget - g) / QUANTUM_FRAMES;
      let peak = 0;
      for (let f = 0; f < QUANTUM_FRAMES; f++) {
        g += step;
        const l = pl[f]! * g;
        const rr = pr[f]! * g;
        outL[f]! += l;
        if (outR !== outL) outR[f]! += rr;
        else outL[f]! += rr;
        const a = l > 0 ? l : -l;
        const b = rr > 0 ? rr : -rr;
        if (a > peak) peak = a;
        if (b > peak) peak = b;
      }
      this.lastGain[p] = gainTarget;
      const pk = v.peerF32(p, PEER_F32.PEAK);
      f32[pk] = Math.max(peak, f32[pk]! * METER_DECAY);
    }
    this.finishMaster(outL, outR);
    if (recording) this.heard.finish(outL, outR);
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
