// Receive-side timing statistics of the network worker: inter-frame delay variation per peer
// (the paper's Fig. 8 measure) and the optional per-frame arrival trace the page can download.

import { QUANTUM_MS } from '../src/shared/constants.ts';
import { seqDiff } from '../src/shared/seq.ts';

const IFDV_WINDOW = 1024;

/**
 * IFDV at the receiver: for consecutive arrivals, |inter-arrival time − inter-capture time|, where
 * the capture interval is the sequence difference × 2.667 ms (exact, unlike timestamps, and immune
 * to loss and reordering). Preallocated; add() allocates nothing.
 */
export class IfdvWindow {
  private readonly values = new Float32Array(IFDV_WINDOW);
  private count = 0;
  private lastSeq = -1;
  private lastArrivalMs = 0;

  add(seq: number, arrivalMs: number, _captureMs: number): void {
    if (this.lastSeq >= 0) {
      const d = seqDiff(seq, this.lastSeq);
      if (d > 0 && d < 64) {
        const v = Math.abs(arrivalMs - this.lastArrivalMs - d * QUANTUM_MS);
        this.values[this.count % IFDV_WINDOW] = v;
        this.count++;
      }
    }
    if (this.lastSeq < 0 || seqDiff(seq, this.lastSeq) > 0) {
      this.lastSeq = seq;
      this.lastArrivalMs = arrivalMs;
    }
  }

  summary(): { p50: number; p95: number; max: number } | null {
    const n = Math.min(this.count, IFDV_WINDOW);
    if (n === 0) return null;
    const sorted = this.values.slice(0, n).sort();
    const q = (p: number) => Math.round(sorted[Math.min(n - 1, Math.floor(p * n))]! * 1000) / 1000;
    return { p50: q(0.5), p95: q(0.95), max: Math.round(sorted[n - 1]! * 1000) / 1000 };
  }

  /** Start a new window (the previous arrival is kept as the reference). */
  reset(): void {
    this.count = 0;
  }
}

/** Rows the trace holds: ten minutes of one peer, or proportionally less each of several. */
export const TRACE_CAPACITY = 375 * 600;

/** Per-frame arrival trace (preallocated when recording starts; ~4.7 MB). */
export class ArrivalTrace {
  private readonly peerIds: string[] = [];
  private readonly peer = new Uint8Array(TRACE_CAPACITY);
  private readonly seq = new Uint32Array(TRACE_CAPACITY);
  private readonly arrivalMs = new Float64Array(TRACE_CAPACITY);
  private readonly captureMs = new Float64Array(TRACE_CAPACITY);
  length = 0;
  private recording = true;

  add(peerId: string, seq: number, arrivalMs: number, captureMs: number): void {
    if (!this.recording || this.length >= TRACE_CAPACITY) return;
    let idx = this.peerIds.indexOf(peerId);
    if (idx < 0) idx = this.peerIds.push(peerId) - 1;
    const i = this.length++;
    this.peer[i] = idx;
    this.seq[i] = seq;
    this.arrivalMs[i] = arrivalMs;
    this.captureMs[i] = captureMs;
  }

  /** Stop recording but keep the rows for download. */
  stop(): this {
    this.recording = false;
    return this;
  }

  snapshot(): { peers: string[]; peer: Uint8Array; seq: Uint32Array; arrivalMs: Float64Array; captureMs: Float64Array } {
    const n = this.length;
    return {
      peers: [...this.peerIds],
      peer: this.peer.slice(0, n),
      seq: this.seq.slice(0, n),
      arrivalMs: this.arrivalMs.slice(0, n),
      captureMs: this.captureMs.slice(0, n),
    };
  }
}
