// Pure: the room view's line about our own speaker (main thread). The output device's dropouts
// (StatsMessage.output, from AudioContext.playbackStats) are gaps every peer's sound had at once:
// this computer did not have the audio ready in time (a busy machine, another program holding the
// CPU), not the network. Shown apart from the peers' quality, over the same window. Unit-tested.

import type { StatsSample } from '../engine/stats-recorder.ts';
import { QUALITY_WINDOW } from './quality.ts';

export interface OutputNote {
  text: string;
  /** Dropouts in the window: shown as a warning. */
  warn: boolean;
}

/** The line for the last QUALITY_WINDOW seconds of stats (oldest first), or null where the browser does not tell. */
export function outputNote(samples: readonly StatsSample[]): OutputNote | null {
  const recent = samples.slice(-(QUALITY_WINDOW + 1));
  const last = recent[recent.length - 1]?.stats.output;
  if (!last) return null;
  const first = recent.find((s) => s.stats.output)?.stats.output ?? last;
  // The counts only grow within one audio context; a new one (a restart) starts again from zero.
  const events = last.events >= first.events ? last.events - first.events : last.events;
  const ms = last.ms >= first.ms ? last.ms - first.ms : last.ms;
  const all = last.events > events ? ` (${last.events} in all)` : '';
  if (events === 0) return { text: `Speaker: no dropouts in the last ${QUALITY_WINDOW} s${all}`, warn: false };
  return {
    text: `Speaker: ${events} dropout${events === 1 ? '' : 's'} (${ms.toFixed(1)} ms) in the last ${QUALITY_WINDOW} s${all}: this computer did not have the sound ready in time`,
    warn: true,
  };
}
