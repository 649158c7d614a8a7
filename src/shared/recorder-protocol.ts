// Messages across the page ↔ recorder-worker boundary, both directions, as discriminated unions.
// No audio crosses here: the samples travel through the record ring (memory-layout.ts) straight
// from the network worker to the recorder, which writes them to the Origin Private File System.

import type { RecordMemory } from './memory-layout.ts';

/** One file of a take. */
export interface TrackInfo {
  /** Shown and used as the download name, e.g. "input". */
  name: string;
  /** File name inside the take's folder. */
  file: string;
  bytes: number;
  /** Whole frames of audio in the file. */
  frames: number;
}

/** A take as its sidecar (take.json) describes it. */
export interface TakeInfo {
  id: string;
  /** What the player was in when it started (the room name), for the list. */
  title: string;
  /** ISO time of the first recorded quantum's capture. */
  startedAt: string;
  sampleRate: number;
  bitsPerSample: 24;
  channels: 2;
  tracks: TrackInfo[];
  /** Spans written as silence because the recorder fell behind by more than its ring (frames). */
  gaps: { atFrame: number; frames: number }[];
  /** 'recording' while open; 'complete' after a stop; 'recovered' when a later start repaired it after a crash. */
  state: 'recording' | 'complete' | 'recovered';
  /** Why it ended, when it did not end by a press of Stop. */
  endedBy?: 'quota' | 'error' | 'page-closed';
}

export interface StartRecordingMessage {
  type: 'start';
  id: string;
  title: string;
  input: RecordMemory;
}
export interface StopRecordingMessage {
  type: 'stop';
}
/** Repair the takes a crash left open, then answer `takes`. */
export interface RecoverMessage {
  type: 'recover';
}
export interface ListTakesMessage {
  type: 'list';
}
export interface DeleteTakeMessage {
  type: 'delete';
  id: string;
}
export type ToRecorder = StartRecordingMessage | StopRecordingMessage | RecoverMessage | ListTakesMessage | DeleteTakeMessage;

/** Once a second while recording. */
export interface RecordingStatusMessage {
  type: 'status';
  id: string;
  seconds: number;
  bytes: number;
  /** Storage this origin may still use (navigator.storage.estimate), or null where the browser does not say. */
  storageLeftBytes: number | null;
  /** A warning to show (storage running out), or null. */
  warning: string | null;
  /** Time the recorder worker spent draining, converting, writing and flushing over the last second, ms. */
  busyMsPerSecond: number;
}
export interface RecordingStoppedMessage {
  type: 'stopped';
  take: TakeInfo;
  /** Shown to the player when the take ended by itself (storage full, a write error). */
  message: string | null;
}
export interface TakesMessage {
  type: 'takes';
  takes: TakeInfo[];
  /** Ids of the takes `recover` repaired just now. */
  recovered: string[];
}
export interface RecorderErrorMessage {
  type: 'error';
  message: string;
}
export type FromRecorder = RecordingStatusMessage | RecordingStoppedMessage | TakesMessage | RecorderErrorMessage;
