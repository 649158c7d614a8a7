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
}

const USAGE = 'usage: npm run bench [-- --short | --long] [--seconds N]';

export function parseArgs(argv: string[]): BenchConfig {
  let mode: BenchConfig['mode'] = 'full';
  let seconds: number | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--short') mode = 'short';
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
    p4Streams: [1, 4, 8, 16, 31],
    p5Seconds: short ? 10 : 60,
    stall: { busyMs: 300, everyMs: 2000 },
  };
}
