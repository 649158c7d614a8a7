// What the two AudioWorkletNodes receive: processorOptions at creation, and, on the playback
// node's port, a message when a take starts or ends (never per quantum, never audio). Everything
// else goes through shared memory. In the test build only, the playback node's port also carries
// its output tap's onsets back to the page.

import type { CaptureMemory, HeardMemory } from './memory-layout.ts';

export const CAPTURE_PROCESSOR = 'tutti-capture';
export const PLAYBACK_PROCESSOR = 'tutti-playback';

export interface CaptureProcessorOptions {
  capture: CaptureMemory;
}
export interface PlaybackProcessorOptions {
  playback: SharedArrayBuffer;
  /** The metronome block (memory-layout.ts, "Metronome"). */
  metronome: SharedArrayBuffer;
  /** Test build only: report the output's onsets (worklets/test-onset-tap.ts); ignored in production. */
  tap?: boolean;
}

/** A take starts: push what is heard into this ring while its HEARD_I32.ON is 1 (null: forget the last one). */
export interface RecordHeardMessage {
  type: 'record-heard';
  heard: HeardMemory | null;
}
/** Messages on the playback node's port. */
export type ToPlaybackWorklet = RecordHeardMessage;

/** Test build only: an onset in the playback output at context frame `frame`, and its largest sample, signed (worklets/test-onset-tap.ts). */
export interface OnsetMessage {
  type: 'onset';
  frame: number;
  peak: number;
}
/** Messages from the playback node's port (test build only). */
export type FromPlaybackWorklet = OnsetMessage;
