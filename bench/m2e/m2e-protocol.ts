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

declare global {
  interface Window {
    /** A: microphone → MediaStreamSource → destination, one AudioContext. */
    __m2eDirect(): Promise<PathInfo>;
    /** W: microphone → RTCPeerConnection audio track → second RTCPeerConnection in this page → <audio>. */
    __m2eWebRtc(): Promise<PathInfo>;
  }
}
