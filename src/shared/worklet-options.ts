// What the two AudioWorkletNodes receive: processorOptions at creation, and, on the playback
// node's port, a message when a take starts or ends (never per quantum, never audio). Everything
// else goes through shared memory.

import type { CaptureMemory, HeardMemory } from './memory-layout.ts';

export const CAPTURE_PROCESSOR = 'tutti-capture';
export const PLAYBACK_PROCESSOR = 'tutti-playback';

export interface CaptureProcessorOptions {
  capture: CaptureMemory;
}
export interface PlaybackProcessorOptions {
  playback: SharedArrayBuffer;
}

/** A take starts: push what is heard into this ring while its HEARD_I32.ON is 1 (null: forget the last one). */
export interface RecordHeardMessage {
  type: 'record-heard';
  heard: HeardMemory | null;
}
/** Messages on the playback node's port. */
export type ToPlaybackWorklet = RecordHeardMessage;
