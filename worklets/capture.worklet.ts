// Capture AudioWorkletProcessor (audio rendering thread), the fallback capture path for browsers
// without MediaStreamTrackProcessor: copies every 128-frame input quantum, as stereo interleaved
// floats, into the ringbuf.js capture ring and wakes the network worker. The worker applies the
// input gain, meters and sends (workers/net.worker.ts), as it does on the normal path.

import { QUANTUM_FRAMES, QUANTUM_SAMPLES } from '../src/shared/constants.ts';
import { CAP_I32, CaptureViews } from '../src/shared/memory-layout.ts';
import { CAPTURE_PROCESSOR, type CaptureProcessorOptions } from '../src/shared/worklet-options.ts';

class CaptureProcessor extends AudioWorkletProcessor {
  private readonly views: CaptureViews;
  private readonly frame = new Float32Array(QUANTUM_SAMPLES);

  constructor(options: AudioWorkletNodeOptions) {
    super(options);
    this.views = new CaptureViews((options.processorOptions as CaptureProcessorOptions).capture);
  }

  override process(inputs: Float32Array[][], _outputs: Float32Array[][]): boolean {
    const input = inputs[0];
    const frame = this.frame;
    const l = input?.[0];
    if (!l) {
      frame.fill(0); // no input connected yet: keep the stream's clock running with silence
    } else {
      const r = input[1] ?? l;
      for (let f = 0; f < QUANTUM_FRAMES; f++) {
        frame[2 * f] = l[f]!;
        frame[2 * f + 1] = r[f]!;
      }
    }
    const i32 = this.views.i32;
    if (this.views.ring.available_write() >= QUANTUM_SAMPLES) {
      this.views.ring.push(frame, QUANTUM_SAMPLES);
      // Publish after the push, then wake the worker parked in Atomics.waitAsync on WAKE.
      Atomics.add(i32, CAP_I32.WAKE, 1);
      Atomics.notify(i32, CAP_I32.WAKE);
    } else {
      Atomics.add(i32, CAP_I32.OVERFLOWS, 1); // the worker is more than a ring behind
    }
    return true;
  }
}

registerProcessor(CAPTURE_PROCESSOR, CaptureProcessor);
