// Reports our output device's clock to the network worker (main thread, twenty times a second; no
// audio). `AudioContext.getOutputTimestamp()` pairs the context time being played with the
// performance time it is played at, and only the page can call it. The worker fits the slope of
// those readings as one side of the clock drift it shows (workers/shown-drift.ts). A hidden tab's
// timers slow down; fewer readings only make the fit slower.
// Beside each reading go the device's dropouts so far (`AudioContext.playbackStats`, Chromium:
// the gaps the speaker played because the browser had no audio ready in time), which the worker
// puts in its stats; a browser without it sends null.

import type { OutputDropouts } from '../shared/worker-protocol.ts';
import type { NetBridge } from './net-bridge.ts';

/** Twenty a second: a step of the output (a stall of the machine) is followed within a few readings (workers/speaker-time.ts). */
const READ_EVERY_MS = 50;

/** `AudioContext.playbackStats` (Chromium; not yet in TypeScript's DOM types). Durations in seconds. */
interface PlaybackStats {
  readonly underrunEvents: number;
  readonly underrunDuration: number;
}

/** The device's dropouts so far, or null where the browser does not tell. */
export function outputDropouts(context: AudioContext): OutputDropouts | null {
  const stats = (context as AudioContext & { playbackStats?: PlaybackStats }).playbackStats;
  if (!stats || typeof stats.underrunEvents !== 'number' || typeof stats.underrunDuration !== 'number') return null;
  return { events: stats.underrunEvents, ms: Math.round(stats.underrunDuration * 1e4) / 10 };
}

/** Starts the readings; the returned function stops them. */
export function reportOutputClock(context: AudioContext, net: NetBridge): () => void {
  const timer = setInterval(() => {
    if (context.state !== 'running') return;
    const ts = context.getOutputTimestamp();
    if (ts.contextTime === undefined || ts.performanceTime === undefined || !(ts.contextTime > 0)) return;
    net.outputClock(ts.contextTime, performance.timeOrigin + ts.performanceTime, outputDropouts(context));
  }, READ_EVERY_MS);
  return () => clearInterval(timer);
}
