/// <reference path="../../worklets/audioworklet.d.ts" />
// Floor isolator, playback side (audio thread of the playback AudioContext): one quantum from the
// shared FIFO (bench/m2e/fifo.ts) per render quantum.

import { FifoViews } from './fifo.ts';

class FifoPlayback extends AudioWorkletProcessor {
  private readonly fifo: FifoViews;
  private readonly spare = new Float32Array(128);
  constructor(options: AudioWorkletNodeOptions) {
    super(options);
    this.fifo = new FifoViews((options.processorOptions as { sab: SharedArrayBuffer }).sab);
  }
  override process(_inputs: Float32Array[][], outputs: Float32Array[][]): boolean {
    const l = outputs[0]?.[0];
    if (l) this.fifo.pop(l, outputs[0]![1] ?? this.spare);
    return true;
  }
}
registerProcessor('m2e-fifo-playback', FifoPlayback);
