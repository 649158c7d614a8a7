// The SharedArrayBuffer layouts every thread shares, defined once. The page allocates them,
// the network worker and the two worklets map views onto them; nothing else defines an offset.
//
// Contract notation used below: W = the only thread that writes the field, R = who reads it.
// "cap" = capture worklet, "play" = playback worklet, "net" = network worker, "page" = main thread.
// Every Int32 field is accessed with Atomics.load/store/add/compareExchange only. Float32 fields
// (gains, meters) are single aligned 32-bit words written whole by one writer: readers may see a
// value one quantum old, never a torn one. Sample storage is published by a later atomic store.

import { RingBuffer } from 'ringbuf.js';
import { CAPTURE_RING_QUANTA, JITTER_SLOTS, MAX_PEERS, QUANTUM_FRAMES, QUANTUM_SAMPLES } from './constants.ts';

// ---------------------------------------------------------------------------------------------
// Capture: cap --(ringbuf.js SPSC ring of stereo float quanta)--> net
// ---------------------------------------------------------------------------------------------

/**
 * Int32 fields of the capture control block. The ring and WAKE carry audio only on the fallback
 * path (a browser without MediaStreamTrackProcessor): there the capture worklet feeds the ring.
 * Normally the network worker reads the microphone itself (workers/track-capture.ts).
 */
export const CAP_I32 = {
  /** W cap (Atomics.add +1 after each pushed quantum, then Atomics.notify), R net (Atomics.waitAsync). */
  WAKE: 0,
  /** W cap: quanta dropped because the ring was full (net stalled > ring length). R net (→ stats). */
  OVERFLOWS: 1,
  SIZE: 4,
} as const;

/** Float32 fields of the capture control block (after the Int32 block). */
export const CAP_F32 = {
  /** W net (each quantum it sends, after the input gain): decaying peak of the input (0..1+), R page meter. */
  PEAK: 0,
  /** W page (the input-gain control, 0..4; 1 at creation), R net, which multiplies every captured sample by it. */
  INPUT_GAIN: 1,
  SIZE: 2,
} as const;

export interface CaptureMemory {
  /** Backing store of the ringbuf.js ring; pass to `new RingBuffer(ring, Float32Array)`. */
  ring: SharedArrayBuffer;
  control: SharedArrayBuffer;
}

export function createCaptureMemory(): CaptureMemory {
  const mem = {
    ring: RingBuffer.getStorageForCapacity(CAPTURE_RING_QUANTA * QUANTUM_SAMPLES, Float32Array),
    control: new SharedArrayBuffer((CAP_I32.SIZE + CAP_F32.SIZE) * 4),
  };
  captureMeterView(mem)[CAP_F32.INPUT_GAIN] = 1;
  return mem;
}

/** The capture block's Float32 fields alone (meter, input gain), for threads that must not touch the ring. */
export function captureMeterView(mem: CaptureMemory): Float32Array {
  return new Float32Array(mem.control, CAP_I32.SIZE * 4, CAP_F32.SIZE);
}

export class CaptureViews {
  readonly ring: RingBuffer;
  readonly i32: Int32Array;
  readonly f32: Float32Array;
  constructor(mem: CaptureMemory) {
    this.ring = new RingBuffer(mem.ring, Float32Array);
    this.i32 = new Int32Array(mem.control, 0, CAP_I32.SIZE);
    this.f32 = captureMeterView(mem);
  }
}

// ---------------------------------------------------------------------------------------------
// Recording: net --(ringbuf.js SPSC ring of stereo float quanta)--> recorder worker
// ---------------------------------------------------------------------------------------------
// Made by the page for one take and handed to both workers; the network worker pushes each
// captured quantum (dry: before the input gain), the recorder worker drains it every 50 ms into
// the take's file. Nothing is posted per quantum.

/** Quanta the record ring holds: 2 s, so a recorder stalled by a slow disk loses nothing for that long. */
export const RECORD_RING_QUANTA = 750;

/** Int32 fields of the record control block. */
export const REC_I32 = {
  /** W net (Atomics.add +1 per quantum it could not push: ring full), R recorder (writes that many quanta of silence, a gap in the take's sidecar). */
  OVERFLOWS: 0,
  /** W net (Atomics.store 1 after writing REC_F64.FIRST_CAPTURE_MS, before the first push), R recorder (Atomics.load; then FIRST_CAPTURE_MS is valid). */
  STARTED: 1,
  /**
   * W net (Atomics.add, after pushing as many frames of silence): frames the microphone's stream
   * lost (workers/track-capture.ts onLost). R recorder (a gap in the take's sidecar).
   */
  LOST_FRAMES: 2,
  /**
   * W net (Atomics.add, before the LOST_FRAMES add of the same loss): of the frames lost, those the
   * device never delivered (its capture stalled; track-capture.ts LossCause 'device'), the rest
   * the track processor dropped. R recorder (Atomics.load after LOST_FRAMES: every pause counted
   * in the LOST_FRAMES it read is in; the gap's cause in the sidecar).
   */
  PAUSED_FRAMES: 3,
  SIZE: 4,
} as const;

/** Float64 fields of the record control block (after the Int32 block, 8-byte aligned). */
export const REC_F64 = {
  /** W net (before the Atomics.store of STARTED = 1): the first pushed quantum's capture time, wall-clock ms. R recorder, after it reads STARTED = 1. */
  FIRST_CAPTURE_MS: 0,
  SIZE: 1,
} as const;

export interface RecordMemory {
  /** Backing store of the ringbuf.js ring; pass to `new RingBuffer(ring, Float32Array)`. */
  ring: SharedArrayBuffer;
  control: SharedArrayBuffer;
}

export function createRecordMemory(): RecordMemory {
  return {
    ring: RingBuffer.getStorageForCapacity(RECORD_RING_QUANTA * QUANTUM_SAMPLES, Float32Array),
    control: new SharedArrayBuffer(REC_I32.SIZE * 4 + REC_F64.SIZE * 8),
  };
}

export class RecordViews {
  readonly ring: RingBuffer;
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  constructor(mem: RecordMemory) {
    this.ring = new RingBuffer(mem.ring, Float32Array);
    this.i32 = new Int32Array(mem.control, 0, REC_I32.SIZE);
    this.f64 = new Float64Array(mem.control, REC_I32.SIZE * 4, REC_F64.SIZE);
  }
}

// ---------------------------------------------------------------------------------------------
// Recording what we hear: play --(ringbuf.js SPSC ring of variable-length records)--> recorder
// ---------------------------------------------------------------------------------------------
// Made by the page for one take, with the record ring above. While HEARD_I32.ON is 1 the playback
// worklet pushes, after each render quantum, one record: every remote peer it rendered, before the
// listener's gain (what that peer sounds like here, concealment and drift correction included),
// and the mix as it left for the speaker. The recorder worker drains it every 50 ms into one track
// per participant and the mix. A record is pushed whole or not at all (one push call, so the
// reader never sees half of one), and each carries its render index, so a record the ring had no
// room for shows as a jump in the index: the recorder fills it with silence and notes a gap.
//
// Record layout (Float32 elements; integers below 2^24 are exact):
//   [0] n, the peer tracks in this record
//   [1] the render index (PLAY_I32.QUANTA before this render) modulo 2^24
//   n × { [0] track number (PEER_I32.TRACK), [1] HeardFlag bits, [2..] QUANTUM_SAMPLES samples }
//   QUANTUM_SAMPLES samples of the mix

/** Floats before the first track of a record, and before the samples of each track. */
export const HEARD_RECORD_HEAD = 2;
export const HEARD_TRACK_HEAD = 2;
/** Floats of a record with `tracks` peer tracks. */
export function heardRecordFloats(tracks: number): number {
  return HEARD_RECORD_HEAD + tracks * (HEARD_TRACK_HEAD + QUANTUM_SAMPLES) + QUANTUM_SAMPLES;
}
/** The render index is carried modulo this (2^24 quanta = 12.4 h). */
export const HEARD_INDEX_MOD = 1 << 24;
/** The ring holds 2 s of records with this many peers (more peers: proportionally less time). */
export const HEARD_RING_TRACKS = 8;
export const HEARD_RING_QUANTA = 750;

/** What happened to a peer's audio in one render quantum (a track's flag bits in a record). */
export const HeardFlag = {
  /** A frame was lost or late: concealment filled it. */
  CONCEALED: 1,
  /** Nothing newer had arrived: concealment (then silence) while playout waited. */
  UNDERRUN: 2,
  /** Playout skipped frames: to get back to its target depth (a crossfaded splice), or at a resync of a stream it was playing (a jump). */
  TRIMMED: 4,
  /** Played at a rate other than 1 (drift correction): the samples are resampled, not the sender's. */
  RESAMPLED: 8,
} as const;

/** Int32 fields of the heard control block. */
export const HEARD_I32 = {
  /** W page (Atomics.store: 1 starts a take, 0 stops it), R play at each render quantum. */
  ON: 0,
  /**
   * W play (Atomics.store 1, after writing FIRST_FRAME, before pushing the first record), R net and
   * recorder (Atomics.load; then FIRST_FRAME is valid).
   */
  STARTED: 1,
  /** W play, once, before STARTED: the context frame (modulo 2^32) the first record's render started at. R net. */
  FIRST_FRAME: 2,
  /** W play (Atomics.add +1 per record it had no room for), R recorder (for the sidecar; the index jump says where). */
  OVERFLOWS: 3,
  /**
   * W net (Atomics.store 1 after writing HEARD_F64.FIRST_SPEAKER_MS), R recorder (Atomics.load;
   * then FIRST_SPEAKER_MS is valid). The recorder writes no heard track before this: it needs it to
   * line them up with the input track.
   */
  SPEAKER_KNOWN: 4,
  SIZE: 6,
} as const;

/** Float64 fields of the heard control block (after the Int32 block, 8-byte aligned). */
export const HEARD_F64 = {
  /** W net (before SPEAKER_KNOWN = 1): wall-clock ms at which FIRST_FRAME reached the speaker (workers/speaker-time.ts). R recorder. */
  FIRST_SPEAKER_MS: 0,
  SIZE: 1,
} as const;

export interface HeardMemory {
  /** Backing store of the ringbuf.js ring; pass to `new RingBuffer(ring, Float32Array)`. */
  ring: SharedArrayBuffer;
  control: SharedArrayBuffer;
}

export function createHeardMemory(): HeardMemory {
  return {
    ring: RingBuffer.getStorageForCapacity(HEARD_RING_QUANTA * heardRecordFloats(HEARD_RING_TRACKS), Float32Array),
    control: new SharedArrayBuffer(HEARD_I32.SIZE * 4 + HEARD_F64.SIZE * 8),
  };
}

export class HeardViews {
  readonly ring: RingBuffer;
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  constructor(mem: HeardMemory) {
    this.ring = new RingBuffer(mem.ring, Float32Array);
    this.i32 = new Int32Array(mem.control, 0, HEARD_I32.SIZE);
    this.f64 = new Float64Array(mem.control, HEARD_I32.SIZE * 4, HEARD_F64.SIZE);
  }
}

// ---------------------------------------------------------------------------------------------
// Playback: net --(per-peer de-jitter rings indexed by sequence)--> play
// ---------------------------------------------------------------------------------------------
// A FIFO is the wrong shape here: frames arrive reordered, late or twice, and playout must pick
// "the frame for sequence s" or nothing. Each peer owns JITTER_SLOTS slots; frame s lives in
// slot s % JITTER_SLOTS and is valid only while TAG[slot] === s, so a late frame can never be
// mixed into a later slot.

/** Slot lifecycle (PEER_I32.STATE). */
export const PeerState = {
  /** Unused; net may claim it. */
  FREE: 0,
  /** net initialised it; play mixes it. */
  ACTIVE: 1,
  /** net released it; play stops mixing and moves it to FREE (compareExchange). */
  CLOSING: 2,
} as const;
export type PeerState = (typeof PeerState)[keyof typeof PeerState];

/** Global Int32 fields of the playback block. */
export const PLAY_I32 = {
  /** W play (Atomics.store after each render quantum): quanta rendered. R net, at each packet arrival: the output clock of the drift measurement (workers/drift-estimator.ts); with FRAME_BASE at each output-clock reading, the latency the reading claims (workers/shown-drift.ts). */
  QUANTA: 0,
  /** W play: output samples clipped to full scale. R page. */
  CLIPPED: 1,
  /**
   * W play (Atomics.store before each render, so before the QUANTA it belongs to): the context
   * frame (AudioWorkletGlobalScope.currentFrame, modulo 2^32) of render number 0, i.e. currentFrame
   * − 128 × quanta rendered before this one. It stays the same while process() runs once per render
   * quantum. R net, with QUANTA at each packet arrival: the next render starts at context frame
   * FRAME_BASE + 128 × QUANTA, which the page's output clock turns into the time it reaches the
   * speaker (workers/speaker-time.ts); the same at each output-clock reading (the claimed latency
   * of workers/shown-drift.ts).
   */
  FRAME_BASE: 2,
  SIZE: 4,
} as const;

/** Per-peer Int32 fields. */
export const PEER_I32 = {
  /** W net FREE→ACTIVE, ACTIVE→CLOSING; W play CLOSING→FREE (compareExchange). */
  STATE: 0,
  /** W net: cursor to adopt at the next resync. Written before RESYNC_GEN. */
  RESYNC_CURSOR: 1,
  /** W net: first sequence of the resynchronised stream (misses count from here). Before RESYNC_GEN. */
  RESYNC_FIRST: 2,
  /** W net: seqlock: odd while the two fields above change, then the next even value publishes them. R play at each quantum start. */
  RESYNC_GEN: 3,
  /** W play: the RESYNC_GEN it has adopted. R net (is a resync still pending?). */
  ACK_GEN: 4,
  /**
   * W play: next sequence to take from the ring, stored after each quantum. R net: a frame below it
   * is late ("can be late": play may have moved on since). Moves back only at a resync.
   */
  CURSOR: 5,
  /** W net: highest sequence written. R: diagnostics only (no reader yet). */
  NEWEST: 6,
  /**
   * W net: wanted depth in quanta (MIN_DEPTH..MAX_DEPTH), adaptive or manual. R play, only to know
   * how much to rebuffer after an outage; in steady state net steers the depth through PEER_F32.RATE.
   */
  TARGET_DEPTH: 7,
  /** W net: 1 = muted by the listener. R play. */
  MUTED: 8,
  /** Counters below: W net zeroes them while the slot is FREE; then only play adds (Atomics.add). */
  /** W play: frames mixed (played). R net. */
  PLAYED: 9,
  /** W play: playout slots whose frame was absent (lost or not yet arrived). R net. */
  MISSED: 10,
  /** W play: quanta synthesised by packet-loss concealment. R net (→ stats). */
  CONCEALED: 11,
  /** W play: quanta it waited (concealing) because nothing newer had arrived. R net (→ stats, adaptive depth). */
  UNDERRUNS: 12,
  /**
   * W play (Atomics.store after each quantum): the stream position being played, in frames modulo
   * 2^32 = cursor × 128 − frames already taken from the ring but not yet played. R net: a frame s
   * arriving now has (s × 128 − PLAY_POS) | 0 frames of margin before it plays (its buffer fill).
   */
  PLAY_POS: 13,
  /**
   * W play (Atomics.store after writing the entry): windows published so far. Every FILL_WINDOW
   * quanta play stores, in FILL_MIN[count % FILL_RING], the lowest buffer fill it saw in that window
   * (frames from the read position through the newest frame that has arrived), then bumps this.
   * R net at 10 Hz: reads the entries it has not seen (it falls behind only after FILL_RING windows).
   */
  FILL_COUNT: 14,
  /**
   * W play: quanta it skipped to bring the buffer back to its target at once, when the low point
   * stayed more than TRIM_ABOVE (at least TRIM_EXCESS) above the target for TRIM_SUSTAINED_WINDOWS windows (a stall
   * upstream that delivered its backlog at once, a stall of this audio thread, a lower manual
   * depth). R net (→ stats).
   */
  TRIMMED: 15,
  /** FILL_RING entries (see FILL_COUNT). W play, R net. */
  FILL_MIN: 16,
  /**
   * FILL_RING entries, written with the FILL_MIN entry of the same index (before FILL_COUNT is
   * bumped): TRIMMED as it stood when that window closed. W play, R net: a change between two
   * windows tells the depth controller that the buffer's level stepped down by a trim, not by
   * jitter, so it shifts its history instead of reading the step as a dip.
   */
  FILL_TRIMMED: 24,
  /**
   * W net (Atomics.store): the excess over TARGET_DEPTH (quanta) the low point may keep without a
   * trim, at least TRIM_EXCESS; more where the devices' own rhythm steps the buffer up and down by
   * a period (workers/depth-controller.ts, "Recurring steps"): such a step is the counterpart of
   * one down that is still to come, so trimming it would only cause an underrun later. R play,
   * after each fill window, for the sustained rule; 0 (a slot just claimed) reads as TRIM_EXCESS.
   * The stall trim (TRIM_NOW) does not read it: the level before the stall holds whatever the
   * rhythm held up.
   */
  TRIM_ABOVE: 32,
  /**
   * W net (Atomics.store, before the STATE store that publishes the slot): the recording track of
   * the participant this slot plays, the same number for them across leaving and rejoining
   * (src/engine/track-registry.ts). R play, into each heard record (see "Recording what we hear").
   */
  TRACK: 33,
  /**
   * W net (Atomics.store, after its speaker dating followed a step of our output of at least
   * STALL_STEP_QUANTA: this machine stalled or the device dropped quanta, and the peer's audio
   * piled up meanwhile): the most quanta to trim at once, 0 when nothing is asked. R play, after
   * each fill window: it trims the low point's excess, up to that many quanta, back to the level
   * before the stall to the nearest quantum (its own last windows' low points, over TARGET_DEPTH or
   * under it, but not under TARGET_DEPTH − STALL_TRIM_DEFICIT; TARGET_DEPTH while the stream is
   * too young to have them), without waiting for
   * TRIM_SUSTAINED_WINDOWS; and for
   * TRIM_NOW_WINDOWS windows more, what more excess shows (audio that waited through the stall
   * still arriving), until that many are trimmed. Play takes the request with
   * Atomics.exchange(0), so a request stored meanwhile is never lost (W play too, only that
   * exchange).
   */
  TRIM_NOW: 34,
  /**
   * W net (Atomics.store): the excess over TARGET_DEPTH (quanta) the sustained rule alone lets the
   * low point keep without a trim: TRIM_ABOVE, and while the depth controller's start-up floor
   * holds one burst of arrivals for a recurring step not yet seen, that burst's step too
   * (workers/depth-controller.ts, sustainedAbove): a level a burst up in a join's first seconds
   * comes down with the rhythm's late buffer, and trimming it left the buffer a burst short
   * then. The stall trim (TRIM_NOW) does not read it: a stall's backlog goes as before. R play,
   * after each fill window; 0 reads as TRIM_ABOVE.
   */
  SUSTAINED_ABOVE: 35,
  SIZE: 36,
} as const;

/** Quanta per fill window (43 ms) and windows in the ring (340 ms: net reads at 10 Hz). */
export const FILL_WINDOW = 16;
export const FILL_RING = 8;

/** Global Float32 fields. */
export const PLAY_F32 = {
  /** W net: master output gain. R play. */
  MASTER_GAIN: 0,
  /** W play: decaying peak of the master output. R page. */
  MASTER_PEAK: 1,
  SIZE: 4,
} as const;

/** Per-peer Float32 fields. */
export const PEER_F32 = {
  /** W net: linear gain (0..4). R play, which ramps to it across one quantum. */
  GAIN: 0,
  /** W play: decaying peak of this peer after gain. R page. */
  PEAK: 1,
  /**
   * W net: playout rate for this peer (1 = untouched; 1.001 plays 0.1 % faster, draining the
   * buffer), the drift compensation and adaptive-depth controller's output, within 1 ± MAX_RATE_DEVIATION.
   * R play, which slews toward it; a stale value only delays the correction.
   */
  RATE: 2,
  SIZE: 4,
} as const;

const I32_PER_PEER = PEER_I32.SIZE + 2 * JITTER_SLOTS; // fields, TAG[], TAKEN[]
const I32_TOTAL = PLAY_I32.SIZE + MAX_PEERS * I32_PER_PEER;
const F32_META = PLAY_F32.SIZE + MAX_PEERS * PEER_F32.SIZE;
const F32_SAMPLES_PER_PEER = JITTER_SLOTS * QUANTUM_SAMPLES;
const F32_TOTAL = F32_META + MAX_PEERS * F32_SAMPLES_PER_PEER;

export const PLAYBACK_BYTES = (I32_TOTAL + F32_TOTAL) * 4;

export function createPlaybackMemory(): SharedArrayBuffer {
  const sab = new SharedArrayBuffer(PLAYBACK_BYTES);
  new Float32Array(sab, I32_TOTAL * 4, F32_META)[PLAY_F32.MASTER_GAIN] = 1;
  return sab;
}

/**
 * Typed views and index helpers over the playback block. Construct one per thread; it only
 * computes offsets, so every thread agrees on them by construction.
 */
export class PlaybackViews {
  readonly i32: Int32Array;
  readonly f32: Float32Array;
  constructor(readonly sab: SharedArrayBuffer) {
    if (sab.byteLength !== PLAYBACK_BYTES) throw new Error(`playback memory must be ${PLAYBACK_BYTES} bytes`);
    this.i32 = new Int32Array(sab, 0, I32_TOTAL);
    this.f32 = new Float32Array(sab, I32_TOTAL * 4, F32_TOTAL);
  }
  /**
   * The context frame (modulo 2^32) at which the next render starts, given `rendered`, the
   * QUANTA read just before: FRAME_BASE + 128 × rendered (see PLAY_I32.FRAME_BASE). R net.
   */
  nextRenderFrame(rendered: number): number {
    // Atomics.load: FRAME_BASE is stored before the render whose QUANTA the caller read, so the pair agrees.
    return (Atomics.load(this.i32, PLAY_I32.FRAME_BASE) + QUANTUM_FRAMES * rendered) | 0;
  }
  /** Index in i32 of a per-peer field. */
  peerI32(peer: number, field: number): number {
    return PLAY_I32.SIZE + peer * I32_PER_PEER + field;
  }
  /**
   * Index in i32 of TAG[slot]: W net (Atomics.store of the sequence after writing the samples), R
   * play (before copying the samples, and again after: a resync re-tags every slot, then writes its
   * first frame wherever it falls, so only a tag unchanged across the copy proves it whole).
   */
  tag(peer: number, slot: number): number {
    return PLAY_I32.SIZE + peer * I32_PER_PEER + PEER_I32.SIZE + slot;
  }
  /** Index in i32 of TAKEN[slot]: W play (sequence it mixed or skipped from the slot), R net. */
  taken(peer: number, slot: number): number {
    return PLAY_I32.SIZE + peer * I32_PER_PEER + PEER_I32.SIZE + JITTER_SLOTS + slot;
  }
  /** Index in f32 of a per-peer Float32 field. */
  peerF32(peer: number, field: number): number {
    return PLAY_F32.SIZE + peer * PEER_F32.SIZE + field;
  }
  /** Index in f32 of the first sample of a slot (QUANTUM_SAMPLES stereo-interleaved floats). */
  samples(peer: number, slot: number): number {
    return F32_META + peer * F32_SAMPLES_PER_PEER + slot * QUANTUM_SAMPLES;
  }
}

/**
 * PEER_I32.PLAY_POS for a cursor (the next sequence to take) with `pendingFrames` taken but not yet
 * played: play publishes it each quantum, and net computes the one a pending resync will start at
 * (HALF pending: the resampler's look-ahead). Stream frames modulo 2^32.
 */
export function playPosition(cursor: number, pendingFrames: number): number {
  return (Math.imul(cursor, QUANTUM_FRAMES) - pendingFrames) | 0;
}

/** Frames of audio ahead of frame `seq` when playout is at `playPos` (its buffer fill; negative: late). */
export function marginFrames(seq: number, playPos: number): number {
  return (Math.imul(seq, QUANTUM_FRAMES) - playPos) | 0;
}

/** Slot of a sequence number; JITTER_SLOTS is a power of two, so this is wrap-safe at 2^32. */
export function slotOf(seq: number): number {
  return seq & (JITTER_SLOTS - 1);
}

// ---------------------------------------------------------------------------------------------
// Metronome: net --(beat schedule)--> play --(beat rendered)--> page
// ---------------------------------------------------------------------------------------------
// The room's metronome (src/shared/metronome.ts) is scheduled by the network worker, which knows
// the shared clock and when our playback reaches the speaker (workers/metronome-schedule.ts): a
// few times a second it publishes one beat as an anchor (its number and the context frame at which
// it must start to reach the speaker on time) and the frames between beats. The playback worklet
// renders every beat that falls in its render quantum from that anchor, sample-accurate, and says
// which beat it rendered last, when, for the page's beat light. Nothing is posted per beat.

/** Int32 fields of the metronome block. */
export const MET_I32 = {
  /**
   * W net: seqlock over MET_F64's schedule fields: Atomics.store odd before writing them, the next
   * even value after. R play at each render quantum: reads it, the fields, and it again; an odd or
   * changed value means a write in between, and play keeps the schedule it read last.
   */
  GEN: 0,
  /**
   * W play (Atomics.store, after writing MET_F64.CLICKED_AT): the number of the last beat it
   * rendered, −1 before any. R page (beat light): reads it, CLICKED_AT, and it again; beats are
   * ≥ 200 ms apart, so two equal reads prove CLICKED_AT is that beat's.
   */
  CLICKED_BEAT: 1,
  SIZE: 2,
} as const;

/** Float64 fields of the metronome block (after the Int32 block, 8-byte aligned). */
export const MET_F64 = {
  /** Under GEN (W net): 1 while the metronome runs, 0 stopped (a click already started rings out). */
  RUNNING: 0,
  /** Under GEN: changes at every start, so play forgets the beats of the last run (beat numbers start again). */
  RUN_ID: 1,
  /** Under GEN: the anchor beat's number (0 = the first beat of the count-in; beats before 0 never sound). */
  BEAT: 2,
  /** Under GEN: the context frame (currentFrame, not wrapped) at which the anchor beat's click starts. */
  BEAT_FRAME: 3,
  /** Under GEN: context frames from one beat to the next (the shared clock's beat on our output's clock). */
  FRAMES_PER_BEAT: 4,
  /** Under GEN: beats per bar, and 1 if the first beat of each bar is accented (else 0). */
  BEATS_PER_BAR: 5,
  ACCENT: 6,
  /** W play (before CLICKED_BEAT): the context time, s, at which the click of beat CLICKED_BEAT started. R page. */
  CLICKED_AT: 7,
  SIZE: 8,
} as const;

/** Float32 fields of the metronome block (after the Float64 block). */
export const MET_F32 = {
  /** W page (the click volume, 0..1; 0 = the click muted here, the beat light still runs). R play. */
  GAIN: 0,
  SIZE: 1,
} as const;

export function createMetronomeMemory(): SharedArrayBuffer {
  const sab = new SharedArrayBuffer(MET_I32.SIZE * 4 + MET_F64.SIZE * 8 + MET_F32.SIZE * 4);
  const v = new MetronomeViews(sab);
  Atomics.store(v.i32, MET_I32.CLICKED_BEAT, -1);
  v.f32[MET_F32.GAIN] = 0.5;
  return sab;
}

export class MetronomeViews {
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  readonly f32: Float32Array;
  constructor(readonly sab: SharedArrayBuffer) {
    this.i32 = new Int32Array(sab, 0, MET_I32.SIZE);
    this.f64 = new Float64Array(sab, MET_I32.SIZE * 4, MET_F64.SIZE);
    this.f32 = new Float32Array(sab, MET_I32.SIZE * 4 + MET_F64.SIZE * 8, MET_F32.SIZE);
  }
}
