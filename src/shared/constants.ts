// Audio constants shared by every thread (page, network worker, worklets, server, tests).
// Change them here only: the wire format and the shared-memory layouts derive from them.

/** The only sample rate Tutti runs at; the AudioContext is created with it. */
export const SAMPLE_RATE = 48_000;
/** Frames in one Web Audio render quantum, and in one network packet. */
export const QUANTUM_FRAMES = 128;
/** Duration of one quantum/packet in milliseconds (2.667 ms). */
export const QUANTUM_MS = (QUANTUM_FRAMES / SAMPLE_RATE) * 1000;
/** Internal buses are always stereo; a mono stream is duplicated to both sides. */
export const BUS_CHANNELS = 2;
/** Samples (both channels, interleaved) in one quantum on an internal bus. */
export const QUANTUM_SAMPLES = QUANTUM_FRAMES * BUS_CHANNELS;

/** Remote peers one receiver can mix (the roadmap's 31-stream scale test fits). */
export const MAX_PEERS = 32;
/** Slots in each peer's de-jitter ring: the largest depth plus room for early and reordered frames. */
export const JITTER_SLOTS = 64;
export const MIN_DEPTH = 1;
export const MAX_DEPTH = 32;
/** 8 quanta = 21.3 ms, the depth the JackTrip-WebRTC paper used on a LAN. */
export const DEFAULT_DEPTH = 8;

/** Capture ring capacity in quanta (~170 ms): the worker may stall this long before frames drop. */
export const CAPTURE_RING_QUANTA = 64;

/** Peak-meter fall per quantum: 20 dB per second, shared by the capture and playback meters. */
export const METER_DECAY_PER_QUANTUM = Math.pow(10, -20 / 20 / (SAMPLE_RATE / QUANTUM_FRAMES));

/** Clamp a requested depth into [MIN_DEPTH, MAX_DEPTH]; non-numbers give the default. */
export function clampDepth(depth: number): number {
  if (!Number.isFinite(depth)) return DEFAULT_DEPTH;
  return Math.min(MAX_DEPTH, Math.max(MIN_DEPTH, Math.round(depth)));
}

/**
 * Excess over the target depth (quanta) beyond which the playback worklet trims the buffer at once
 * (a crossfaded skip, counted as a glitch) rather than leaving it to the rate, once the low point
 * has stayed there for a while (worklets/peer-playout.ts). The depth controller never lowers its own
 * target by more than this at once, so its changes are always drained by the rate, glitch-free.
 */
export const TRIM_EXCESS = 4;
/**
 * A step of our own output later by this many quanta or more (rounded) is time our output lost:
 * this machine stalling (its audio thread stopped while the network kept delivering). Every peer's
 * audio now plays that much later, so the backlog it left in each peer's playout is trimmed at once
 * (PEER_I32.TRIM_NOW), not after the sustained rule's ~0.34 s or seconds of rate drain: the delay
 * stays where it was. Not one quantum: a device that drops one now and then leaves one quantum of
 * excess, which the rate steers back to the target within about a second (the depth controller's
 * hysteresis), inaudibly. Trimming each was a skip heard by the listener and counted on every link:
 * once the speaker dating followed every step (workers/speaker-time.ts), headless Chromium's output
 * on a loaded machine, which can drop one every half second, turned every pair's light red and
 * played 314 of 375 frames a second in the third-peer engine test. The cost: a leader-mode strike
 * in the second after such a step can come up to a quantum late (tests/e2e/metronome.spec.ts).
 */
export const STALL_STEP_QUANTA = 2;

/**
 * Seconds of our output's life (its AudioContext time) before its clock dates the speaker closely
 * enough to show a one-way delay (PeerStats.oneWayMs). Measured on the bench rig (PulseAudio,
 * Chromium 156; `npx tsx bench/m2e/segments/main.ts pair`, docs/BENCHMARKS.md "The output clock's
 * first seconds"): over 18 joins (214 clicks) the figure read up to 30 ms off the truth at the speaker in the
 * first 10 s, either way (the browser's output timestamps ramping and correcting every ~1.5 s while
 * the real output stood still, or the real output moving while they did not), and within 4.1 ms
 * from 12 s on (66 clicks). A figure that far off is not shown: the strip says it is measuring.
 */
export const OUTPUT_CLOCK_SETTLE_S = 12;

/** Playout-rate steering limit (±0.5 % ≈ ±8.6 cents while it lasts): drift and depth changes never click. */
export const MAX_RATE_DEVIATION = 0.005;

/** Redundant previous frames a packet may carry (a room setting, 0..MAX_REDUNDANCY). */
export const MAX_REDUNDANCY = 3;
/**
 * One redundant frame by default: a stereo packet with one extra frame (1038 bytes) still fits one
 * SCTP chunk in a 1200-byte datagram, so it costs bandwidth but not extra fragments. See BENCHMARKS.md.
 */
export const DEFAULT_REDUNDANCY = 1;

/**
 * The peer-loopback impulse: the capture worklet replaces the first LOOPBACK_MARKER.length frames
 * of one quantum with this pattern (both sides), and the network worker recognises it, sample for
 * sample after PCM16 quantisation, in the copy the peer echoes back.
 */
export const LOOPBACK_MARKER: readonly number[] = [0.75, -0.75, 0.5, -0.5, 0.75, 0.75, -0.75, -0.75, 0.25, -0.25, 0.625, -0.625, 0.75, -0.5, 0.5, -0.75];

/** Kernel length of the playout resampler in input frames: TAPS/2 before the read position and TAPS/2 after (worklets/resampler.ts). */
export const RESAMPLER_TAPS = 16;
/**
 * Frames the resampler needs before its integer read position (n − HALF + 1 … n + HALF). Part of
 * the playout position arithmetic the network worker shares with the mixer: the jitter writer
 * predicts PLAY_POS (src/shared/memory-layout.ts) from it for a resync the worklet has not adopted.
 */
export const RESAMPLER_HALF = RESAMPLER_TAPS / 2;
