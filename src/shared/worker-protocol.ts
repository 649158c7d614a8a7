// Messages across the page ↔ network-worker boundary, both directions, as discriminated unions.
// None of them carries audio: frames travel only through SharedArrayBuffers and DataChannels the
// worker owns. Control messages only; stats once per second (1 Hz), never per frame.

import type { InputChannels } from './input-channels.ts';
import type { CaptureMemory, HeardMemory, RecordMemory } from './memory-layout.ts';
import type { MetronomeState } from './metronome.ts';
import type { QuantaPerPacket, SendBits } from './wire.ts';

/** Test-only switches; never set by the UI. */
export interface TestOptions {
  /** Record a hash of every encoded and every decoded frame, readable from the worker global `__tuttiTap`. */
  tap?: boolean;
  /** Drop every n-th outgoing frame (n ≥ 2) before sending, to check the receiver's loss figures. */
  dropEvery?: number;
  /** Hold every outgoing audio packet this many ms before sending (a timer per packet), to check the loopback round trip. */
  delayMs?: number;
  /** Plus a random 0..jitterMs ms per packet, to check late % and IFDV. */
  jitterMs?: number;
  /** Resample the capture by this ratio before sending (e.g. 1.001 = a clock 1000 ppm fast). */
  captureRatio?: number;
  /**
   * Act as an app from before PCM24: publish no `wire` version in the member state, and reject
   * every version-2 packet as a v1 decoder does (`bad-version`).
   */
  wireV1?: boolean;
  /** Skew the clock the shared clock's exchanges use: this many ms ahead, plus clockPpm (e.g. 300 = a clock 300 ppm fast). */
  clockOffsetMs?: number;
  clockPpm?: number;
  /**
   * Play on the beat: add an impulse to the captured audio at each metronome beat, at the sample
   * captured when that beat's click reaches our speaker (a player who strikes exactly on the click
   * they hear). The leader-mode test listens for it at the leader.
   */
  playOnBeat?: boolean;
  /** The page's playback output reports its onsets (worklets/test-onset-tap.ts) to the page, for the metronome tests. */
  onsetTap?: boolean;
}

export interface InitMessage {
  type: 'init';
  capture: CaptureMemory;
  playback: SharedArrayBuffer;
  /** The metronome block (memory-layout.ts, "Metronome"). */
  metronome: SharedArrayBuffer;
  channels: 1 | 2;
  depth: number;
  adaptive: boolean;
  redundancy: number;
  test?: TestOptions;
}
/** A remote peer's audio channel, transferred right after creation (before it opens). */
export interface AddPeerMessage {
  type: 'add-peer';
  peerId: string;
  channel: RTCDataChannel;
  /** The highest audio wire version the peer decodes (MemberState.wire; 1 for an app that does not say). */
  wire: number;
  /** The participant's recording track (src/room/track-registry.ts; 0: none), stored in the slot as PEER_I32.TRACK. */
  track: number;
  /** When the peer's microphone stream began (MemberState.micSince, wall-clock ms); absent where its app does not say. */
  micSinceMs?: number;
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
/**
 * Jitter depth for every peer: `adaptive` lets the worker choose the smallest depth the measured
 * arrival jitter allows (default); otherwise `depth` quanta is a manual override.
 */
export interface SetDepthMessage {
  type: 'set-depth';
  depth: number;
  adaptive: boolean;
}
/** Frames of redundancy each outgoing packet carries (0..3): the previous N frames again. */
export interface SetRedundancyMessage {
  type: 'set-redundancy';
  frames: number;
}
/** Ask `peerId` to echo our stream back at network level (their worker), and measure the round trip. */
export interface SetLoopbackMessage {
  type: 'set-loopback';
  peerId: string;
  enabled: boolean;
}
/** Record per-frame arrival times of every peer (preallocated, up to 10 minutes), or stop. */
export interface SetTraceMessage {
  type: 'set-trace';
  enabled: boolean;
}
/** Ask for the recorded arrival trace; answered by a `trace` message. */
export interface GetTraceMessage {
  type: 'get-trace';
}
export interface SetSendMessage {
  type: 'set-send';
  channels: 1 | 2;
  /** Self-mute: send header-only silent packets. */
  muted: boolean;
  /** Sample resolution: PCM16 (the default) or PCM24 (to peers that decode it; PCM16 to the others). */
  bits: SendBits;
  /** Quanta per packet (wire.ts QuantaPerPacket): 1, the default, or 2 for a busy computer. */
  perPacket: QuantaPerPacket;
}
/**
 * A take starts or stops (null). `input`: push every captured quantum, dry (before the input gain),
 * into this record ring for the recorder worker. `heard`: the heard ring's control block, where the
 * worker dates the first heard record at the speaker (HEARD_I32.SPEAKER_KNOWN).
 */
export interface RecordMessage {
  type: 'record';
  input: RecordMemory | null;
  heard: HeardMemory | null;
}
export interface SetMasterGainMessage {
  type: 'set-master-gain';
  gain: number;
}
export interface StopMessage {
  type: 'stop';
}
/**
 * The microphone, as its MediaStreamTrackProcessor's `readable` (transferred: Chromium then
 * delivers each capture buffer to the worker directly). Replaces the previous source; without one
 * the worker sends what the capture worklet puts in the capture ring (fallback path).
 */
export interface CaptureSourceMessage {
  type: 'capture-source';
  readable: ReadableStream<AudioData>;
}
/** Which input channels become our capture's left and right (src/shared/input-channels.ts). */
export interface SetInputChannelsMessage {
  type: 'set-input-channels';
  channels: InputChannels;
}
/**
 * A reading of our output device's clock (`AudioContext.getOutputTimestamp()`), posted by the page
 * twenty times a second: the context time being played at wall time `wallMs`
 * (performance.timeOrigin + performanceTime). The worker's drift figure is measured against it.
 */
export interface OutputClockMessage {
  type: 'output-clock';
  contextTime: number;
  wallMs: number;
  /** The output device's dropouts so far, read beside the clock; null where the browser does not tell. */
  dropouts: OutputDropouts | null;
}
/**
 * Our output device's dropouts since the audio context started (`AudioContext.playbackStats`,
 * cumulative): each time the device asked for audio and the browser had none ready in time, so the
 * speaker played a gap, whoever was heard. A listener hears every one; no peer's stats hold them.
 */
export interface OutputDropouts {
  /** Gaps played (underrun events). */
  events: number;
  /** Their total length, ms. */
  ms: number;
}
/**
 * Our output's stalls since the network worker started: each time its speaker dating saw our
 * output play STALL_STEP_QUANTA or more later than it was due (this machine's audio stopped, or the
 * device dropped that much), and asked every peer's playout to trim the audio that piled up
 * meanwhile (PEER_I32.TRIM_NOW). Cumulative. A trim right after one is the stall's, not the buffer's.
 */
export interface OutputStalls {
  /** Steps seen. */
  count: number;
  /** The time our output lost in them, ms. */
  lostMs: number;
}
/**
 * Which clock the room follows (src/room/shared-clock.ts): ours, a peer's, or none while the
 * reference hands over (hold the last offset). Shared clock = the reference's clock + baseMs.
 */
/**
 * Whose clock the room follows (src/room/shared-clock.ts). `succeed`: the reference left and we
 * take over its timeline: the worker fixes the base at that instant (the shared clock it had
 * minus its own clock, so the timeline runs on with no step), follows its own clock from then on,
 * and answers `clock-base` with that base for the page to publish.
 */
export interface ClockRefMessage {
  type: 'clock-ref';
  ref: { kind: 'self'; baseMs: number } | { kind: 'peer'; peerId: string; baseMs: number } | { kind: 'hold' } | { kind: 'succeed' };
}
/**
 * The room's metronome (null: none yet), as the room document holds it, and our advance in ms: in
 * leader mode, the leader's measured one-way delay from us (0 for the leader, in together mode,
 * and before the leader has measured us).
 */
export interface SetMetronomeMessage {
  type: 'set-metronome';
  state: MetronomeState | null;
  advanceMs: number;
  /**
   * Leader mode, for a member who follows a leader: the leader's peer id. The network worker then
   * takes the advance from the leader's one-way reports on the audio channel while they are fresh
   * (PROTOCOL.md §1.8b), and falls back to `advanceMs`. Null otherwise.
   */
  leaderPeerId: string | null;
}
export type ToWorker =
  | ClockRefMessage
  | SetMetronomeMessage
  | InitMessage
  | AddPeerMessage
  | RemovePeerMessage
  | SetPeerMixMessage
  | SetDepthMessage
  | SetRedundancyMessage
  | SetLoopbackMessage
  | SetTraceMessage
  | GetTraceMessage
  | SetSendMessage
  | RecordMessage
  | SetMasterGainMessage
  | CaptureSourceMessage
  | SetInputChannelsMessage
  | StopMessage
  | OutputClockMessage;

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
  /** Playout quanta filled by packet-loss concealment (lost or late frames, and underruns). */
  concealed: number;
  /** Frames stored from the redundant copies in later packets because their own packet was lost or not there yet (reordered). */
  recovered: number;
  /** Quanta the playout waited because the buffer ran empty (each grows the delay by one quantum). */
  underruns: number;
  /** Quanta skipped (a crossfaded splice) when the buffer's low point stayed more than TRIM_EXCESS above the target: a glitch that cuts a backlog's delay at once. */
  trimmed: number;
  /** Target depth in quanta: the adaptive choice, or the manual override. */
  depth: number;
  /**
   * Buffer fill in quanta, from the playback worklet's low point of each 43 ms window (what is
   * still queued when it has just taken what it plays): their mean and minimum over the last
   * second, and `held`, their median over the last ~0.5 s, which is what the playout rate holds
   * at `target` (the depth as the engine means it) less `relief`: how far below the target the
   * rate holds it now, quanta, while the sender's delivery runs late (depth-controller.ts, "Slow
   * lateness"; at a manual depth too); down to −1, a quantum above the target, at the bottom of a
   * delivery ramp whose lag steps ("The step's eve").
   */
  fill: { avg: number; min: number; held: number; target: number; relief: number };
  /** Percentages of the frames expected over the whole session (received + late + lost). */
  percent: { late: number; lost: number; duplicates: number; rejected: number };
  /** Round trip of the audio DataChannel itself (ping/pong in the worker), ms; null before the first answer. */
  rttMs: number | null;
  /** Inter-frame delay variation at this receiver over the last second, ms: |inter-arrival − inter-capture|. */
  ifdvMs: { p50: number; p95: number; max: number } | null;
  /** Received payload rate, kbit/s. */
  kbpsIn: number;
  /**
   * The sender's audio clock relative to our output's, ppm (+ = faster), measured over the last
   * `driftSeconds` (up to ~4 min, the first 15 s of the stream left out); null before 60 s of
   * them (workers/shown-drift.ts). The playout rate uses estimates of its own.
   */
  driftPpm: number | null;
  driftSeconds: number;
  /** Playout rate the resampler applies (1 = untouched). */
  rate: number;
  /** Our DataChannel's bufferedAmount towards this peer, bytes (sender backlog). */
  bufferedAmount: number;
  /** Frames we did not send to this peer because its channel was congested (its oldest queued byte waited over 16 quanta, ≈ 43 ms: workers/send-queue.ts). */
  sendDropped: number;
  /**
   * Redundant copies we send to this peer now: the room's setting, lowered while this link is
   * congested (frames dropped at the sender) and raised again after a clean stretch (SendGovernor).
   */
  sendRedundancy: number;
  /** We send this peer a mono mixdown (we send stereo, but its link is congested even without copies). */
  sendMono: boolean;
  /** The resolution we send this peer (PCM16 when we chose it, or when its app decodes nothing else, or on the mono rung). */
  sendBits: SendBits;
  /** The resolution of the peer's last audio packet with samples, or null before one came. */
  bits: SendBits | null;
  /** Peer loopback: round trip measured by an impulse through the peer's worker, ms (null when off or undetected). */
  loopbackRttMs: number | null;
  /** Added latency (capture timestamp to playout, excluding device I/O), ms, over the last second. */
  latencyMs: { p50: number; p99: number } | null;
  /**
   * One-way delay from this peer to our speaker, ms, over the last second: its capture timestamp to
   * the moment our output device plays the frame, dated by our output clock
   * (AudioContext.getOutputTimestamp(), workers/speaker-time.ts). Null before the page's first
   * output-clock reading, while the page has not sent one for 5 s, and while our output has played
   * less than OUTPUT_CLOCK_SETTLE_S (its first seconds date the speaker up to 30 ms off).
   */
  oneWayMs: { p50: number; p99: number } | null;
  framesPerSecond: number;
  /**
   * The peer's clock against ours from the shared clock's exchanges (workers/clock-sync.ts): its
   * clock minus ours now, ms; drift, ppm; the error bound, ms; exchanges used of those in the last
   * minute. Null before the first answer, or when the peer's app has no shared clock (wire < 3).
   */
  clock: { offsetMs: number; driftPpm: number; errorMs: number; used: number; samples: number } | null;
}

/** The shared clock from this worker's side (StatsMessage.clock). */
export interface SharedClockStats {
  /** Whose clock the room follows: ours, a peer's (refPeerId), or none while it hands over. */
  ref: 'self' | 'peer' | 'hold';
  refPeerId: string | null;
  /** Shared clock minus our clock, ms (null before it is known). */
  offsetMs: number | null;
  /** Bound on the error of offsetMs, ms (0 when we are the reference). */
  errorMs: number | null;
  /** Shared clock minus this page's wall clock (performance.timeOrigin + performance.now()), ms (null before known). */
  sharedMinusWallMs: number | null;
}

/**
 * The metronome here: off (stopped, or none), running (beats scheduled at our speaker), or waiting
 * for the shared clock or for the first readings of when our playback reaches the speaker.
 */
export type MetronomeStatus = 'off' | 'running' | 'no-clock' | 'no-speaker';

export interface StatsMessage {
  type: 'stats';
  sent: number;
  sendFramesPerSecond: number;
  /** Packets a second to each peer (send rounds: sendFramesPerSecond / perPacket while nothing is dropped). */
  sendPacketsPerSecond: number;
  /** Quanta per packet in use (the player's choice). */
  perPacket: QuantaPerPacket;
  /** Quanta the capture worklet dropped because the worker fell behind by a whole ring. */
  captureOverflows: number;
  /** Frames the microphone's track lost because the worker fell behind its queue (the track capture path). */
  captureLostFrames: number;
  /** Worker busy time spent on audio per wall second, ms. */
  workerCpuMsPerSecond: number;
  /** Sent payload rate per peer, kbit/s (including redundancy). */
  kbpsOut: number;
  /** Redundant frames per packet in use. */
  redundancy: number;
  /** Whether the depth is chosen adaptively. */
  adaptive: boolean;
  /** Frames in the arrival trace so far (0 when not recording). */
  traceFrames: number;
  /** Our output device's dropouts so far (OutputDropouts), as the page last read them; null where the browser does not tell. */
  output: OutputDropouts | null;
  /** Steps of our output later by STALL_STEP_QUANTA or more so far (OutputStalls): each peer's backlog was trimmed at each. */
  outputStalls: OutputStalls;
  clock: SharedClockStats;
  metronome: MetronomeStatus;
  peers: PeerStats[];
}
/** The arrival trace: one row per received frame. */
export interface TraceMessage {
  type: 'trace';
  /** Column-major rows: peer index into `peers`, sequence, arrival time (ms, worker clock), capture time (ms, sender clock). */
  peers: string[];
  peer: Uint8Array;
  seq: Uint32Array;
  arrivalMs: Float64Array;
  captureMs: Float64Array;
}
export interface ReadyMessage {
  type: 'ready';
}
export interface PeerOpenMessage {
  type: 'peer-open';
  peerId: string;
}
/**
 * Why the worker let go of a peer's channel: the page asked (`removed by page`), the channel closed
 * under it (`channel closed`: the page's audio mesh then renegotiates), a new channel for the same
 * peer replaced it (`replaced`), or the worker stopped (`stopped`).
 */
export type PeerClosedReason = 'removed by page' | 'channel closed' | 'replaced' | 'stopped';
export interface PeerClosedMessage {
  type: 'peer-closed';
  peerId: string;
  reason: PeerClosedReason;
}
export interface WorkerErrorMessage {
  type: 'error';
  message: string;
}
/**
 * The microphone source of the last `capture-source` delivers: the worker read the previous one up
 * to this moment (a device switch sends without a gap) and has let it go, so the page may stop
 * the previous track.
 */
export interface CaptureSwitchedMessage {
  type: 'capture-switched';
}

/**
 * The microphone's stream ended or failed (the device was unplugged, or the track stopped): the
 * worker sends silence from now on. The page falls back to another input (src/room/device-choice.ts)
 * and shows `reason` only if that fails.
 */
export interface CaptureEndedMessage {
  type: 'capture-ended';
  reason: string;
}

/** The answer to clock-ref `succeed`: the base the worker now uses (shared = our clock + baseMs). */
export interface ClockBaseMessage {
  type: 'clock-base';
  baseMs: number;
}

export type FromWorker = ReadyMessage | StatsMessage | TraceMessage | PeerOpenMessage | PeerClosedMessage | WorkerErrorMessage | CaptureSwitchedMessage | CaptureEndedMessage | ClockBaseMessage;
