// The depth sweep's verdict on one sustained tone through C (Node side, bench only): clean as a
// listener hears it, and clean as far as Tutti's playout goes where the receiver's output device
// dropped out on its own.

import { QUANTUM_MS } from '../../src/shared/constants.ts';

/** What one sustained tone through a Tutti pair showed: in the recording, and in the receiving app's counters. */
export interface ToneCounts {
  /** Tone seconds analysed (0: no tone was found in the recording). */
  seconds: number;
  /** Envelope dips and phase jumps in the recorded copy (bench/m2e/tone.ts). */
  dips: number;
  jumps: number;
  /** The receiving app's own glitch counters over the tone. */
  underruns: number;
  trimmed: number;
  late: number;
  lost: number;
  /** Times the receiver's output device played something it was not given (playbackStats); null where the browser does not tell. */
  speakerDropouts: number | null;
  /**
   * Our output's stalls at the receiver (StatsMessage.outputStalls: its output clock stepped later
   * by STALL_STEP_QUANTA or more, the sound server playing it later than due), and the ms lost:
   * each is a gap heard, and at each the playout trims the backlog the stall left (TRIM_NOW).
   */
  outputStalls: number;
  outputStalledMs: number;
}

export interface ToneVerdict {
  /** Nothing heard and nothing counted: no dip, no jump, no app glitch, no speaker dropout, no stall of our output. */
  clean: boolean;
  /**
   * The playout was clean: the app counted no underrun, late or lost frame, no trim beyond the
   * backlog our output's stalls left (their quanta, one more per stall for rounding), and the
   * recording holds no more dips and jumps together than the receiver's output dropped out, plus
   * two per stall (its gap, and the trim that takes its backlog). On this rig a page with a worklet
   * on its output misses render deadlines every minute with no Tutti code at all (B2 alone: 2–27
   * dropouts a minute, docs/BENCHMARKS.md "The floor under a clean 60 s tone"), the sound server
   * now and then plays a stream 13–23 ms later than due, and the jitter buffer's depth changes
   * neither. A dropout can leave a dip and a jump both, so the count errs toward "not clean";
   * every glitch the playout itself makes is in the app's counters. Where the browser does not
   * report dropouts, they count as none.
   */
  playoutClean: boolean;
}

export function toneVerdict(c: ToneCounts): ToneVerdict {
  const heard = c.dips + c.jumps;
  const counted = c.underruns + c.trimmed + c.late + c.lost;
  const toned = c.seconds > 0;
  return {
    clean: toned && heard === 0 && counted === 0 && (c.speakerDropouts ?? 0) === 0 && c.outputStalls === 0,
    playoutClean: toned && c.underruns + c.late + c.lost === 0 && c.trimmed <= stallBacklog(c.outputStalls, c.outputStalledMs) && heard <= (c.speakerDropouts ?? 0) + 2 * c.outputStalls,
  };
}

/** The quanta our output's stalls (`stalls` of them, `stalledMs` in all) leave to trim: their time, and one more per stall for rounding. */
export function stallBacklog(stalls: number, stalledMs: number): number {
  return stalls > 0 ? Math.round(stalledMs / QUANTUM_MS) + stalls : 0;
}
