// Messages across the page ↔ recorder-worker boundary, both directions, as discriminated unions.
// No audio crosses here: the samples travel through the record ring and the heard ring
// (memory-layout.ts) straight from the network worker and the playback worklet to the recorder,
// which writes them to the Origin Private File System.

import type { HeardMemory, RecordMemory } from './memory-layout.ts';

/** What a span of a heard track holds other than the sender's samples as sent. */
export type SpanKind = 'concealed' | 'underrun' | 'trimmed' | 'resampled';

/** A run of frames of one track: where it starts on the take's timeline and how long it is. */
export interface Span {
  atFrame: number;
  frames: number;
}

/** One file of a take. */
export interface TrackInfo {
  /** Shown and used as the download name: "input", "mix", or the participant's name. */
  name: string;
  /** File name inside the take's folder. */
  file: string;
  bytes: number;
  /** Whole frames of audio in the file. */
  frames: number;
  /** input: our microphone, dry; heard: one participant as we heard them, before our gain; mix: what our speaker played. (Absent: input, a take from before remote tracks.) */
  kind?: 'input' | 'heard' | 'mix';
  /** A heard track's number (src/room/track-registry.ts): the same participant keeps it across leaving and rejoining. */
  track?: number;
  /** A heard track: when the participant's audio was playing here (outside them: silence, they were away or not yet joined). */
  present?: Span[];
  /** A heard track: spans that are not the sender's samples as sent (concealment of lost or late frames, underruns, trims, drift-corrected playout). At most MAX_SPANS; `spansDropped` counts the rest. */
  spans?: (Span & { kind: SpanKind })[];
  spansDropped?: number;
  /** A heard track: the participant's one-way delay, their microphone to our speaker, median over the take (ms), when measured. */
  oneWayMs?: number;
}

/** How the heard tracks were lined up with the input track (both start at the take's frame 0). */
export interface TakeAlignment {
  /** Wall-clock ms the input's frame 0 was captured. */
  inputStartMs: number;
  /** Wall-clock ms the first heard frame reached the speaker. */
  heardStartMs: number;
  /** Where the first heard frame sits on the take's timeline (frames; negative: its first frames were cut). */
  heardOffsetFrames: number;
  /** 'speaker': from the output device's timestamps; 'none': no reading came in time, the heard tracks start at the input's frame 0 unaligned. */
  by: 'speaker' | 'none';
  /**
   * The output clock (heard tracks, mix) against the capture clock (input) over the take: heard
   * frames per input frame between the take's first and last 10 s, − 1, × 10⁶
   * (workers/take-clocks.ts); absent for takes under a minute. An output that loses time in
   * steps (a busy machine's device) reads as drift here too: it moves the tracks apart all the same.
   */
  clockPpm?: number;
  /** What that drift makes of the alignment by the take's end: the heard tracks sit this many frames later (negative: earlier) against the input than at its start. */
  endDriftFrames?: number;
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
  /**
   * Spans of the input track written as silence (frames): the recorder fell behind by more than its
   * ring (no cause), or the microphone's stream lost them (`cause`: 'dropped', the browser dropped
   * buffers because the network worker fell behind; 'device', nothing reached the microphone's
   * track for that long: the input device or the browser's capture path before the track stalled,
   * and the sound of that time never reached the page).
   */
  gaps: (Span & { cause?: 'dropped' | 'device' })[];
  /** The same for the heard tracks and the mix (absent in takes from before remote tracks). */
  heardGaps?: Span[];
  alignment?: TakeAlignment;
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
  /** What the playback worklet renders, per participant and mixed (null: the input alone). */
  heard: HeardMemory | null;
  /** Names of the heard tracks known so far, by track number. */
  names: Record<number, string>;
}
/** A heard track's participant is known or renamed (sent as they join, before their audio can arrive). */
export interface TrackNamesMessage {
  type: 'track-names';
  names: Record<number, string>;
}
export interface StopRecordingMessage {
  type: 'stop';
  /** Each heard track's one-way delay (median over the take, ms), by track number. */
  oneWayMs: Record<number, number>;
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
/** Build one archive of a finished take (every track and the sidecar); answered by `archive`. */
export interface ArchiveTakeMessage {
  type: 'archive';
  id: string;
  /** Heard tracks moved earlier by each participant's one-way delay (lined up with when they played). */
  asPlayed: boolean;
}
export type ToRecorder = StartRecordingMessage | TrackNamesMessage | StopRecordingMessage | ArchiveTakeMessage | RecoverMessage | ListTakesMessage | DeleteTakeMessage;

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
export interface ArchiveMessage {
  type: 'archive';
  id: string;
  /** The download's file name. */
  name: string;
  /** The ZIP, made of the take's files (read lazily by the browser). */
  blob: Blob;
}
export interface RecorderErrorMessage {
  type: 'error';
  message: string;
}
export type FromRecorder = RecordingStatusMessage | RecordingStoppedMessage | TakesMessage | ArchiveMessage | RecorderErrorMessage;
