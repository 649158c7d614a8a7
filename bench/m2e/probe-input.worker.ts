// Bench worker (not the app): reads the microphone track's AudioData as Tutti's network worker does
// (workers/track-capture.ts) and reports the capture time the browser gives each click onset, on
// this worker's timeline exactly as the app computes it. bench/m2e/segments/probe-joins.ts compares it with
// the time the click really reached the microphone.

import type { ProbeInputMessage, ProbeInputReport } from './probe-protocol.ts';

const RATE = 48_000;
/** An onset: above LEVEL after QUIET_FRAMES at or below it (a 2 ms pulse is one onset). */
const LEVEL = 0.1;
const QUIET_FRAMES = RATE / 20;

const report: ProbeInputReport = { onsetsUs: [], buffers: 0, frames: [], ages: [], workerTimeOrigin: performance.timeOrigin };
let quiet = QUIET_FRAMES;

self.onmessage = (e: MessageEvent<ProbeInputMessage>) => {
  const m = e.data;
  if (m.type === 'start') void pump(m.readable.getReader());
  else self.postMessage(report);
};

async function pump(reader: ReadableStreamDefaultReader<AudioData>): Promise<void> {
  let plane = new Float32Array(4096);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const n = value.numberOfFrames;
    if (n > plane.length) plane = new Float32Array(n);
    value.copyTo(plane, { planeIndex: 0, format: 'f32-planar', frameCount: n });
    // As the app: AudioData.timestamp on this worker's performance timeline, µs.
    const firstUs = performance.timeOrigin * 1000 + value.timestamp;
    report.buffers++;
    if (report.frames.length < 64) report.frames.push(n);
    if (report.ages.length < 4096) report.ages.push((performance.timeOrigin + performance.now()) * 1000 - firstUs);
    for (let i = 0; i < n; i++) {
      if (Math.abs(plane[i]!) > LEVEL) {
        if (quiet >= QUIET_FRAMES) report.onsetsUs.push(firstUs + (i * 1e6) / RATE);
        quiet = 0;
      } else quiet++;
    }
    value.close();
  }
}
