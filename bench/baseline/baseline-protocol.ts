// Messages of the baseline bench page (main thread ↔ its two worklets). The baseline is the
// JackTrip-WebRTC main-branch design: audio crosses the main thread as postMessage payloads.

/** Capture worklet → main: one quantum, stereo interleaved (a fresh array per quantum). */
export interface BaselineCaptureMessage {
  type: 'quantum';
  samples: Float32Array;
}
/** Main → playback worklet: one received packet (wire format v1), transferred. */
export interface BaselinePacketMessage {
  type: 'packet';
  packet: ArrayBuffer;
}
export interface BaselineDepthMessage {
  type: 'depth';
  depth: number;
}
export type ToBaselinePlayback = BaselinePacketMessage | BaselineDepthMessage;

/** Counters of the baseline's jitter queue, the same definitions as Tutti's PeerStats. */
export interface BaselineCounters {
  /** Frames stored before their playout slot. */
  received: number;
  /** Frames that arrived after their playout slot had passed. */
  late: number;
  duplicates: number;
  rejected: number;
  resyncs: number;
  played: number;
  /** Playout slots with no frame (late or lost). */
  missed: number;
}
/** Playback worklet → main, every 19 quanta (~50 ms). */
export interface BaselineCountersMessage {
  type: 'counters';
  counters: BaselineCounters;
  /** Frames stored from redundant copies (JitterQueue.recovered). */
  recovered: number;
}
