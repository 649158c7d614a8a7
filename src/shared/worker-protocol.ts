// Messages across the page ↔ network-worker boundary, both directions, as discriminated unions.
// None of them carries audio: frames travel only through SharedArrayBuffers and DataChannels the
// worker owns. Control messages only; stats every 500 ms (2 Hz).

import type { CaptureMemory } from './memory-layout.ts';

/** Test-only switches; never set by the UI. */
export interface TestOptions {
  /** Record a hash of every encoded and every decoded frame, readable from the worker global `__tuttiTap`. */
  tap?: boolean;
}

export interface InitMessage {
  type: 'init';
  capture: CaptureMemory;
  playback: SharedArrayBuffer;
  channels: 1 | 2;
  depth: number;
  test?: TestOptions;
}
/** A remote peer's audio channel, transferred right after creation (before it opens). */
export interface AddPeerMessage {
  type: 'add-peer';
  peerId: string;
  channel: RTCDataChannel;
}
export interface RemovePeerMessage {
  type: 'remove-peer';
  peerId: string;
}
export interface SetPeerMixMessage {
  type: 'set-peer-mix';
  peerId: string;
  gain: number;
  muted: boolean;
}
export interface SetDepthMessage {
  type: 'set-depth';
  depth: number;
}
export interface SetSendMessage {
  type: 'set-send';
  channels: 1 | 2;
  /** Self-mute: send header-only silent packets. */
  muted: boolean;
}
export interface SetMasterGainMessage {
  type: 'set-master-gain';
  gain: number;
}
export interface StopMessage {
  type: 'stop';
}

export type ToWorker =
  | InitMessage
  | AddPeerMessage
  | RemovePeerMessage
  | SetPeerMixMessage
  | SetDepthMessage
  | SetSendMessage
  | SetMasterGainMessage
  | StopMessage;

export interface PeerStats {
  peerId: string;
  /** Index of the peer's slot in the playback memory (for meters). */
  slot: number;
  channelState: RTCDataChannelState;
  received: number;
  late: number;
  lost: number;
  duplicates: number;
  rejected: number;
  /** Rejected packets by reason name (see wire.ts REJECT_NAMES); reasons with none are absent. */
  rejectedBy: Record<string, number>;
  resyncs: number;
  /** Frames of a stream the peer has since restarted, dropped. */
  stale: number;
  played: number;
  missed: number;
  /** Depth the playback worklet currently applies, in quanta. */
  depth: number;
  /** Added latency (capture timestamp to playout, excluding device I/O), ms, since the previous stats message. */
  latencyMs: { p50: number; p99: number } | null;
  framesPerSecond: number;
}

export interface StatsMessage {
  type: 'stats';
  sent: number;
  sendFramesPerSecond: number;
  /** Quanta the capture worklet dropped because the worker fell behind by a whole ring. */
  captureOverflows: number;
  /** Worker busy time spent on audio per wall second, ms. */
  workerCpuMsPerSecond: number;
  peers: PeerStats[];
}
export interface ReadyMessage {
  type: 'ready';
  /** How the worker is woken for capture frames. */
  wake: 'waitAsync';
}
export interface PeerOpenMessage {
  type: 'peer-open';
  peerId: string;
}
export interface PeerClosedMessage {
  type: 'peer-closed';
  peerId: string;
  reason: string;
}
export interface WorkerErrorMessage {
  type: 'error';
  message: string;
}

export type FromWorker = ReadyMessage | StatsMessage | PeerOpenMessage | PeerClosedMessage | WorkerErrorMessage;
