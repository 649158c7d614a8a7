// processorOptions handed to the two AudioWorkletNodes at creation: the only message either
// worklet ever receives. After that they talk to the network worker through shared memory alone.

import type { CaptureMemory } from './memory-layout.ts';

export const CAPTURE_PROCESSOR = 'tutti-capture';
export const PLAYBACK_PROCESSOR = 'tutti-playback';

export interface CaptureProcessorOptions {
  capture: CaptureMemory;
}
export interface PlaybackProcessorOptions {
  playback: SharedArrayBuffer;
}
