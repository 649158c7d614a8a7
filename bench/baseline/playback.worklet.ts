/// <reference path="../../worklets/audioworklet.d.ts" />
// Baseline playback worklet (audio thread): packets arrive from the main thread by postMessage
// and are decoded into a de-jitter queue; each render quantum plays the next one. Counters go
// back to the main thread every 19 quanta (~50 ms).

import { DEFAULT_DEPTH } from '../../src/shared/constants.ts';
import type { BaselineCountersMessage, ToBaselinePlayback } from './baseline-protocol.ts';
import { JitterQueue } from './jitter-queue.ts';

class BaselinePlayback extends AudioWorkletProcessor {
  private readonly queue = new JitterQueue(DEFAULT_DEPTH);
  private quanta = 0;
  constructor(options: AudioWorkletNodeOptions) {
    super(options);
    this.port.onmessage = (ev) => {
      const m = ev.data as ToBaselinePlayback;
      if (m.type === 'packet') this.queue.push(m.packet);
      else this.queue.setDepth(m.depth);
    };
  }
  override process(_inputs: Float32Array[][], outputs: Float32Array[][]): boolean {
    const out = outputs[0];
    const l = out?.[0];
    if (l) this.queue.render(l, out[1] ?? new Float32Array(l.length));
    if (++this.quanta % 19 === 0) this.port.postMessage({ type: 'counters', counters: { ...this.queue.counters }, recovered: this.queue.recovered } satisfies BaselineCountersMessage);
    return true;
  }
}
registerProcessor('baseline-playback', BaselinePlayback);
