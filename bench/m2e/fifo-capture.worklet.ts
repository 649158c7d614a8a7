/// <reference path="../../worklets/audioworklet.d.ts" />
// Floor isolator, capture side (audio thread of the capture AudioContext): every input quantum
// into the shared FIFO (bench/m2e/fifo.ts).

import { FifoViews } from './fifo.ts';

class FifoCapture extends AudioWorkletProcessor {
  private readonly fifo: FifoViews;
  private readonly silence = new Float32Array(128);
  constructor(options: AudioWorkletNodeOptions) {
    super(options);
    this.fifo = new FifoViews((options.processorOptions as { sab: SharedArrayBuffer }).sab);
  }
  override process(inputs: Float32Array[][]): boolean {
    const l = inputs[0]?.[0] ?? this.silence;
    this.fifo.push(l, inputs[0]?.[1] ?? l);
    return true;
  }
}
registerProcessor('m2e-fifo-capture', FifoCapture);
