// The floor isolator's FIFO (shared by the page and both of its worklets): one SharedArrayBuffer,
// stereo frames, one writer (the capture worklet) and one reader (the playback worklet). It is
// deliberately not Tutti's ring: set-up B asks what the browser and the audio server leave for any
// two-worklet chain, so it holds nothing but a fixed prefill.

/** Header slots (Int32, in frames or counts). */
export const FIFO = {
  /** Frames written since the start; written by the capture worklet only, with Atomics.store. */
  WRITE: 0,
  /** Frames read; written by the playback worklet only. */
  READ: 1,
  /** Quanta the playback found fewer than 128 frames and played silence (it waits: the delay grows). */
  UNDERRUNS: 2,
  /** Quanta the capture found no room and dropped. */
  OVERFLOWS: 3,
  /** Set by the page: the reader re-positions itself to `PREFILL` quanta behind the writer, then clears it. */
  RESET: 4,
  /** Quanta the reader keeps behind the writer at a reset. */
  PREFILL: 5,
} as const;
const HEADER = 8;
export const FIFO_CAPACITY_FRAMES = 128 * 64;
const FRAMES = 128;

export function fifoBuffer(prefillQuanta: number): SharedArrayBuffer {
  const sab = new SharedArrayBuffer(HEADER * 4 + FIFO_CAPACITY_FRAMES * 2 * 4);
  new Int32Array(sab, 0, HEADER)[FIFO.PREFILL] = prefillQuanta;
  return sab;
}

export class FifoViews {
  readonly header: Int32Array;
  readonly data: Float32Array;
  constructor(sab: SharedArrayBuffer) {
    this.header = new Int32Array(sab, 0, HEADER);
    this.data = new Float32Array(sab, HEADER * 4, FIFO_CAPACITY_FRAMES * 2);
  }

  /** Capture side, once per quantum: stores one quantum or counts an overflow. Allocates nothing. */
  push(l: Float32Array, r: Float32Array): void {
    const h = this.header;
    const w = Atomics.load(h, FIFO.WRITE);
    if (w - Atomics.load(h, FIFO.READ) + FRAMES > FIFO_CAPACITY_FRAMES) {
      Atomics.add(h, FIFO.OVERFLOWS, 1);
      return;
    }
    for (let i = 0; i < FRAMES; i++) {
      const at = ((w + i) % FIFO_CAPACITY_FRAMES) * 2;
      this.data[at] = l[i] ?? 0;
      this.data[at + 1] = r[i] ?? 0;
    }
    Atomics.store(h, FIFO.WRITE, w + FRAMES);
  }

  /** Playback side, once per quantum: plays one quantum, or silence and an underrun. Allocates nothing. */
  pop(l: Float32Array, r: Float32Array): void {
    const h = this.header;
    const w = Atomics.load(h, FIFO.WRITE);
    let rd = Atomics.load(h, FIFO.READ);
    if (Atomics.load(h, FIFO.RESET)) {
      // May re-read frames already played: harmless, it happens once, before the measurement.
      rd = Math.max(0, w - Atomics.load(h, FIFO.PREFILL) * FRAMES);
      Atomics.store(h, FIFO.UNDERRUNS, 0);
      Atomics.store(h, FIFO.OVERFLOWS, 0);
      Atomics.store(h, FIFO.RESET, 0);
    }
    if (w - rd < FRAMES) {
      l.fill(0);
      r.fill(0);
      Atomics.store(h, FIFO.READ, rd);
      Atomics.add(h, FIFO.UNDERRUNS, 1);
      return;
    }
    for (let i = 0; i < FRAMES; i++) {
      const at = ((rd + i) % FIFO_CAPACITY_FRAMES) * 2;
      l[i] = this.data[at]!;
      r[i] = this.data[at + 1]!;
    }
    Atomics.store(h, FIFO.READ, rd + FRAMES);
  }
}
