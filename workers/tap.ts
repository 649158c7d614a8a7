// Test tap of the network worker: records a hash per encoded and per decoded frame so the
// end-to-end tests can prove bit-exactness between two browsers. Enabled only by the `test.tap`
// init option; the test reads it with Playwright's worker.evaluate(), never through the page.

const CAPACITY = 375 * 120; // two minutes of frames per stream

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

export class Tap {
  readonly sent = new FrameLog();
  readonly received = new Map<string, FrameLog>();
  /** The most recent second of the sent signal's left channel (circular), to check the capture is the test's WAV. */
  readonly sentSignal = new Float32Array(48_000);
  sentSignalLength = 0;
  streamId = 0;
  log(peerId: string): FrameLog {
    let l = this.received.get(peerId);
    if (!l) this.received.set(peerId, (l = new FrameLog()));
    return l;
  }
}
