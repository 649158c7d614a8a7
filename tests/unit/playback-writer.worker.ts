// Writer thread for playback-threads.test.ts: plays the network worker's role on the playback
// memory. Claims a peer slot with a JitterWriter and hands it a seeded stream of packets on a
// wall-clock schedule: one frame per period, each delayed by a random jitter (so they also arrive
// out of order), some dropped, some duplicated; the stream restarts (new stream id, far sequence:
// a resync through the RESYNC_GEN seqlock) at set frames, and once the slot is released
// (CLOSING), waited for until the reader frees it, and claimed again for a new stream.
// Every sample's value names its frame and position (streamSample), so the reader can tell a
// torn or misplaced frame from a whole one.

import { parentPort, workerData } from 'node:worker_threads';
import { MAX_PEERS, QUANTUM_FRAMES } from '../../src/shared/constants.ts';
import { PEER_I32, PeerState, PlaybackViews } from '../../src/shared/memory-layout.ts';
import { decodeHeader, newHeader } from '../../src/shared/wire.ts';
import { JitterWriter, findFreePeer, type ReceiverCounters } from '../../workers/jitter-writer.ts';
import { mulberry32, randInt } from './prng.ts';

export interface WriterData {
  sab: SharedArrayBuffer;
  seed: number;
  frames: number;
  periodMs: number;
  /** Most a frame is delayed past its due time, in periods. */
  jitterPeriods: number;
  depth: number;
  /** Frame indices at which the sender restarts its stream (a resync). */
  restarts: number[];
  /** Frame index at which the slot is released and claimed again. */
  reclaimAt: number;
  /** Wall-clock ms (timeOrigin + now) of frame 0's due time, shared with the reader. */
  startMs: number;
}

export interface WriterResult {
  /** Data packets handed to a JitterWriter. */
  accepted: number;
  /** Each writer's counters, in the order the slot was claimed. */
  counters: ReceiverCounters[];
  slots: number[];
}

/**
 * The PCM16 value of sample `i` (0..255, interleaved stereo) of frame `seq`. Left: 1 + the low 6
 * bits of the sequence and the frame position (7 bits), so never 0 (silence). Right: minus 1 +
 * the next 6 bits of the sequence and an 8-bit check of the left. 12 bits of sequence tell apart
 * the frames that share a slot (JITTER_SLOTS apart). A concealed or crossfaded value is exact by
 * chance about once in 2^10; a pair that passes the check, about once in 2^28.
 */
export function streamSample(seq: number, i: number): number {
  const low = seq & 0x3f;
  const pos = i >> 1;
  if ((i & 1) === 0) return 1 + ((low << 7) | pos);
  return -1 - ((((seq >>> 6) & 0x3f) << 8) | check(low, pos));
}

function check(low: number, pos: number): number {
  let h = Math.imul(((low << 7) | pos) ^ 0x9e3779b9, 0x85ebca6b);
  h ^= h >>> 15;
  h = Math.imul(h, 0x27d4eb2f);
  return (h >>> 13) & 0xff;
}

/** A played pair (left, right, × 32768) as [12 bits of its sequence, its frame position], or null when it is not a stored pair. */
export function decodeStreamPair(l: number, r: number): [number, number] | null {
  if (!Number.isInteger(l) || l < 1 || l > 8192 || !Number.isInteger(r) || r > -1 || r < -16384) return null;
  const low = (l - 1) >> 7;
  const pos = (l - 1) & 0x7f;
  const u = -1 - r;
  if ((u & 0xff) !== check(low, pos)) return null;
  return [((u >> 8) << 6) | low, pos];
}

function packet(seq: number, streamId: number): ArrayBuffer {
  const b = new Uint8Array(14 + QUANTUM_FRAMES * 2 * 2);
  b[0] = 0xa1;
  b[2] = streamId & 0xff;
  b[3] = 2;
  b[4] = QUANTUM_FRAMES;
  b[6] = seq & 0xff;
  b[7] = (seq >>> 8) & 0xff;
  b[8] = (seq >>> 16) & 0xff;
  b[9] = (seq >>> 24) & 0xff;
  for (let i = 0; i < QUANTUM_FRAMES * 2; i++) {
    const s = streamSample(seq, i) & 0xffff;
    b[14 + 2 * i] = s & 0xff;
    b[15 + 2 * i] = s >>> 8;
  }
  return b.buffer;
}

function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

function main(d: WriterData): WriterResult {
  const v = new PlaybackViews(d.sab);
  const rng = mulberry32(d.seed);
  // The schedule: each frame's arrival (due + jitter), a few dropped, a few twice.
  const arrivals: { at: number; k: number }[] = [];
  for (let k = 0; k < d.frames; k++) {
    const due = k * d.periodMs;
    const r = rng();
    if (r < 0.01) continue;
    arrivals.push({ at: due + rng() * d.jitterPeriods * d.periodMs, k });
    if (r > 0.99) arrivals.push({ at: due + rng() * 2 * d.jitterPeriods * d.periodMs, k });
  }
  arrivals.sort((a, b) => a.at - b.at);
  // Each stream: its id and the sequence of its frame 0 (restarts jump far away).
  const streamOf = (k: number): number => d.restarts.filter((r) => r <= k).length + (k >= d.reclaimAt ? 100 : 0);
  const bases = new Map<number, number>();
  const base = (s: number): number => {
    if (!bases.has(s)) bases.set(s, randInt(rng, 0, 2 ** 32 - 1));
    return bases.get(s)!;
  };
  const h = newHeader();
  const nap = new Int32Array(new SharedArrayBuffer(4));
  let writer = new JitterWriter(v, findFreePeer(v, MAX_PEERS), d.depth);
  const result: WriterResult = { accepted: 0, counters: [writer.counters], slots: [writer.peer] };
  let reclaimed = false;
  for (const a of arrivals) {
    const wait = d.startMs + a.at - nowMs();
    if (wait > 1) Atomics.wait(nap, 0, 0, wait - 1);
    while (nowMs() < d.startMs + a.at) {
      // spin the last millisecond
    }
    if (!reclaimed && a.k >= d.reclaimAt) {
      // The peer leaves and a new one takes a slot: CLOSING until the reader frees it.
      reclaimed = true;
      writer.release();
      const slot = writer.peer;
      while (Atomics.load(v.i32, v.peerI32(slot, PEER_I32.STATE)) !== PeerState.FREE) Atomics.wait(nap, 0, 0, 0.2);
      writer = new JitterWriter(v, findFreePeer(v, MAX_PEERS), d.depth);
      result.counters.push(writer.counters);
      result.slots.push(writer.peer);
    }
    // A new peer's channel carries none of the old one's packets.
    if (reclaimed && a.k < d.reclaimAt) continue;
    const s = streamOf(a.k);
    const seq = (base(s) + a.k) >>> 0;
    const view = new DataView(packet(seq, 1 + (s % 250)));
    if (decodeHeader(view, h) !== 0) throw new Error('the harness built a bad packet');
    writer.accept(h, view);
    result.accepted++;
  }
  return result;
}

if (parentPort) parentPort.postMessage(main(workerData as WriterData));
