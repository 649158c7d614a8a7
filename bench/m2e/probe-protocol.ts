// What the device-truth probe (bench/m2e/probe.ts, probe-input.worker.ts) reports to the bench
// (bench/m2e/segments/). Bench code only.

export type ProbeInputMessage = { type: 'start'; readable: ReadableStream<AudioData> } | { type: 'report' };

export interface ProbeInputReport {
  /** Wall-clock µs the browser gives each click onset in the microphone's AudioData, as the app computes it. */
  onsetsUs: number[];
  buffers: number;
  /** The first capture buffers' sizes, frames. */
  frames: number[];
  /** Per buffer: read time − capture time of its first frame, µs. */
  ages: number[];
  workerTimeOrigin: number;
}

export interface ProbeOutputReport {
  /** Context time (s) of each click scheduled. */
  clickContextS: number[];
  /** getOutputTimestamp readings, twenty a second as the app takes them: context time (s) and wall ms. */
  readContextS: number[];
  readWallMs: number[];
  /** At each reading: currentTime (s), outputLatency and baseLatency (s). */
  readCurrentS: number[];
  /** At each reading: the wall clock now, ms. */
  readNowMs: number[];
  outputLatencyS: number[];
  baseLatencyS: number[];
}

export interface ProbeReport {
  input: ProbeInputReport;
  output: ProbeOutputReport;
  pageTimeOrigin: number;
}

declare global {
  interface Window {
    /** Opens the microphone (read in a worker) and an AudioContext that clicks every `periodS` from now on. */
    __probeStart(periodS: number, latencyHint?: number | 'balanced' | 'interactive' | 'playback'): Promise<void>;
    __probeReport(): Promise<ProbeReport>;
    /** Renders near-silence into the speaker: a second stream on its sink. */
    __probeSilence(): Promise<void>;
  }
}
