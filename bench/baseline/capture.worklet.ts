/// <reference path="../../worklets/audioworklet.d.ts" />
// Baseline capture worklet (audio thread): posts every input quantum to the main thread as a
// fresh Float32Array, as the JackTrip-WebRTC main-branch design does. Allocates per quantum on
// purpose: that is part of what the bench compares.

import { QUANTUM_FRAMES, QUANTUM_SAMPLES } from '../../src/shared/constants.ts';
import type { BaselineCaptureMessage } from './baseline-protocol.ts';

class BaselineCapture extends AudioWorkletProcessor {
  override process(inputs: Float32Array[][]): boolean {
    const l = inputs[0]?.[0];
    const samples = new Float32Array(QUANTUM_SAMPLES);
    if (l) {
      const r = inputs[0]![1] ?? l;
      for (let f = 0; f < QUANTUM_FRAMES; f++) {
        samples[2 * f] = l[f]!;
        samples[2 * f + 1] = r[f]!;
      }
    }
    this.port.postMessage({ type: 'quantum', samples } satisfies BaselineCaptureMessage);
    return true;
  }
}
registerProcessor('baseline-capture', BaselineCapture);
