// Command-line options of `npm run bench` and the durations each mode gives every scenario.

export interface BenchConfig {
  mode: 'short' | 'full' | 'long';
  wakeSeconds: number;
  /** P1 window (two browsers, default depth). */
  p1Seconds: number;
  /** P2: each downward probe, then the confirmation window of the candidate depth. */
  p2ProbeSeconds: number;
  p2ConfirmSeconds: number;
  /** P3 window per path and stall setting. */
  p3Seconds: number;
  /** P4 window per stream count. */
  p4Seconds: number;
  p4Streams: number[];
  /** P5 traced window. */
  p5Seconds: number;
  stall: { busyMs: number; everyMs: number };
  /** `--m2e`: the mouth-to-ear scenario alone; `--p4`: the scaling scenario alone. */
  only: 'm2e' | 'scale' | null;
  m2e: M2eConfig;
}

/** The mouth-to-ear scenario (real audio path, bench/m2e): how much of it each mode runs. */
export interface M2eConfig {
  /** Rounds of A, B1, B2, W, C (default settings), C (smallest clean depth), each a fresh browser process. */
  rounds: number;
  /** Clicks per measurement, 1 s apart. */
  clicks: number;
  /** Whether to step the manual depth down to the smallest clean one (and measure C there each round). */
  sweep: boolean;
  /** Whether each round also measures B1 and B2 (microphone → worklet → FIFO → worklet: the floor of a worklet chain). */
  floorIsolators: boolean;
  /** Sustained tone through A before the sweep (a check of the rig and the detector), then per depth in the sweep, s. */
  toneCheckSeconds: number;
  confirmSeconds: number;
  /** After the streams flow and after a depth change, before measuring, s. */
  settleSeconds: number;
  /**
   * 'C settled' each round (0: not measured): the automatic depth after this long in the room, s;
   * the app's glitches are counted over the last `settledWindowSeconds` of it and the recording.
   */
  settledSeconds: number;
  settledWindowSeconds: number;
}

const USAGE = 'usage: npm run bench [-- --short | --long] [--seconds N] [--m2e | --p4]';

export function parseArgs(argv: string[]): BenchConfig {
  let mode: BenchConfig['mode'] = 'full';
  let seconds: number | null = null;
  let only: BenchConfig['only'] = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--short') mode = 'short';
    else if (a === '--m2e') only = 'm2e';
    else if (a === '--p4') only = 'scale';
    else if (a === '--long') mode = 'long';
    else if (a === '--seconds') {
      seconds = Number(argv[++i]);
      if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`--seconds needs a positive number. ${USAGE}`);
    } else throw new Error(`unknown option '${a}'. ${USAGE}`);
  }
  const short = mode === 'short';
  return {
    mode,
    wakeSeconds: short ? 2 : 10,
    p1Seconds: seconds ?? (short ? 8 : 30),
    p2ProbeSeconds: short ? 3 : 10,
    p2ConfirmSeconds: short ? 10 : mode === 'long' ? 300 : 60,
    p3Seconds: short ? 10 : 60,
    p4Seconds: short ? 4 : 20,
    // Short (CI) stops at 16: the machine is saturated there already (~98 % busy, 19-27 % glitches),
    // and at 31 the synthetic members joining a saturated machine failed 2 of 3 runs (a member's
    // audio channel not open in 60 s; docs/BENCHMARKS.md, P4). The full run keeps 31.
    p4Streams: short ? [1, 4, 8, 16] : [1, 4, 8, 16, 31],
    p5Seconds: short ? 10 : 60,
    stall: { busyMs: 300, everyMs: 2000 },
    only,
    // Short: one round of A, W and C with a few clicks, no depth sweep, no B. Full: 5 rounds (the
    // floor A alone scatters by about ±10 ms between page starts, so single rounds do not compare).
    m2e: {
      rounds: short ? 1 : 5,
      clicks: short ? 6 : 12,
      sweep: !short,
      floorIsolators: !short,
      toneCheckSeconds: 10,
      confirmSeconds: 60,
      // Short: 11 s, so that its one C join's clicks come after the receiver's output has played
      // 12 s, when the app shows its one-way figure (OUTPUT_CLOCK_SETTLE_S); the full run's C
      // default keeps a join's first seconds, and its settled joins check the figure at length.
      settleSeconds: short ? 11 : 3,
      settledSeconds: short ? 0 : 90,
      settledWindowSeconds: 60,
    },
  };
}
