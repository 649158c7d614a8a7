// Capture AudioWorkletProcessor (audio rendering thread): copies every 128-frame input quantum,
// as stereo interleaved floats, into the ringbuf.js capture ring and wakes the network worker.

import { LOOPBACK_MARKER, METER_DECAY_PER_QUANTUM as METER_DECAY, QUANTUM_FRAMES, QUANTUM_SAMPLES } from '../src/shared/constants.ts';
import { CAP_F32, CAP_I32, CaptureViews } from '../src/shared/memory-layout.ts';
import { CAPTURE_PROCESSOR, type CaptureProcessorOptions } from '../src/shared/worklet-options.ts';

class CaptureProcessor extends AudioWorkletProcessor {
  private readonly views: CaptureViews;
  private readonly frame = new Float32Array(QUANTUM_SAMPLES);
  private peak = 0;

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
      this.peak *= METER_DECAY;
      this.views.f32[CAP_F32.PEAK] = this.peak;
    } else {
      const r = input[1] ?? l;
      let peak = 0;
      for (let f = 0; f < QUANTUM_FRAMES; f++) {
        const a = l[f]!;
        const b = r[f]!;
        frame[2 * f] = a;
        frame[2 * f + 1] = b;
        const m = Math.max(a > 0 ? a : -a, b > 0 ? b : -b);
        if (m > peak) peak = m;
      }
      this.peak = Math.max(peak, this.peak * METER_DECAY);
      this.views.f32[CAP_F32.PEAK] = this.peak;
    }
    const i32 = this.views.i32;
    // Peer loopback: the worker asked for an impulse; stamp the marker over this quantum's start.
    const inject = Atomics.load(i32, CAP_I32.INJECT) === 1;
    if (inject) {
      for (let f = 0; f < LOOPBACK_MARKER.length; f++) frame[2 * f] = frame[2 * f + 1] = LOOPBACK_MARKER[f]!;
    }
    if (this.views.ring.available_write() >= QUANTUM_SAMPLES) {
      this.views.ring.push(frame, QUANTUM_SAMPLES);
      if (inject) Atomics.compareExchange(i32, CAP_I32.INJECT, 1, 0);
      // Publish after the push, then wake the worker parked in Atomics.waitAsync on WAKE.
      Atomics.add(i32, CAP_I32.WAKE, 1);
      Atomics.notify(i32, CAP_I32.WAKE);
    } else {
      Atomics.add(i32, CAP_I32.OVERFLOWS, 1); // the worker is more than a ring behind
    }
    Atomics.add(i32, CAP_I32.QUANTA, 1);
    return true;
  }
}

registerProcessor(CAPTURE_PROCESSOR, CaptureProcessor);
