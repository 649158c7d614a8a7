// What the mouth-to-ear reference page (bench/m2e/index.html) offers the Node side: one call per
// set-up, each started once in a fresh browser process.

/** What the page's audio path reported about itself, for the table's notes. */
export interface PathInfo {
  /** AudioContext.baseLatency and outputLatency, ms (null where the path has no AudioContext). */
  baseLatencyMs: number | null;
  outputLatencyMs: number | null;
  /** The microphone track's reported latency setting, ms (null if not reported). */
  inputLatencyMs: number | null;
  sampleRate: number | null;
  channelCount: number | null;
  /** W only: the codec WebRTC chose (e.g. audio/opus 48000/2). */
  codec?: string;
}

/** B only: the FIFO's glitch counters since the measurement started. */
export interface FifoCounters {
  underruns: number;
  overflows: number;
}

declare global {
  interface Window {
    /** A: microphone → MediaStreamSource → destination, one AudioContext. */
    __m2eDirect(): Promise<PathInfo>;
    /** W: microphone → RTCPeerConnection audio track → second RTCPeerConnection in this page → <audio>. */
    __m2eWebRtc(): Promise<PathInfo>;
    /**
     * B: microphone → capture AudioWorklet → SharedArrayBuffer FIFO held at `prefillQuanta` →
     * playback AudioWorklet, in one AudioContext or two (two render clocks, as two peers have).
     */
    __m2eWorklets(contexts: 1 | 2, prefillQuanta: number): Promise<PathInfo>;
    /** B: puts the FIFO back to its prefill and zeroes its counters (just before a measurement). */
    __m2eFifoReset(): void;
    __m2eFifoCounters(): FifoCounters;
    /**
     * The speaker dropouts of this page's last output context so far (`AudioContext.playbackStats`,
     * Chromium: the times the device asked for audio and the render had none ready), or null.
     */
    __m2eSpeakerDropouts(): { events: number; ms: number } | null;
  }
}
