// Reports our output device's clock to the network worker (main thread, twenty times a second; no
// audio). `AudioContext.getOutputTimestamp()` pairs the context time being played with the
// performance time it is played at, and only the page can call it. The worker fits the slope of
// those readings as one side of the clock drift it shows (workers/shown-drift.ts). A hidden tab's
// timers slow down; fewer readings only make the fit slower.

import type { NetBridge } from './net-bridge.ts';

/** Twenty a second: a step of the output (a stall of the machine) is followed within a few readings (workers/speaker-time.ts). */
const READ_EVERY_MS = 50;

/** Starts the readings; the returned function stops them. */
export function reportOutputClock(context: AudioContext, net: NetBridge): () => void {
  const timer = setInterval(() => {
    if (context.state !== 'running') return;
    const ts = context.getOutputTimestamp();
    if (ts.contextTime === undefined || ts.performanceTime === undefined || !(ts.contextTime > 0)) return;
    net.outputClock(ts.contextTime, performance.timeOrigin + ts.performanceTime);
  }, READ_EVERY_MS);
  return () => clearInterval(timer);
}
