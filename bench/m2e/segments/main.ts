// `npx tsx bench/m2e/segments/main.ts probe|pair|output|trace|tone|phase|start [n] [latency hints]` (after `npm run
// build:test` for pair, trace, phase and start, and `npx vite build --config bench/vite.config.ts` for probe, output and tone;
// needs the m2e rig's packages): where the mouth-to-ear time goes, held against the truth at the
// microphone's and the speaker's sinks, both dated on the wall clock (bench/m2e/dating.ts).
//
//   probe [joins]          the browser alone: its capture time and its output timestamp against
//                          the truth, one fresh page per join (probe-joins.ts)
//   pair [joins]           one click's way through a Tutti pair (pair-joins.ts)
//   output [s] [hints]     the browser's output over `s` seconds per AudioContext latencyHint
//                          (comma-separated, e.g. 0,interactive,0.02; output-over-time.ts)
//   trace [joins] [s]      the receiver's playout second by second, each glitch with the depth
//                          controller's state then (playout-trace.ts); TRACE_STALL=s:ms
//                          stops the rig's sound server for ms at s seconds into odd joins;
//                          TRACE_RECORD=s records both sinks from s seconds on as C settled
//                          does (the rig's drift beside the app's); drift-replay.ts replays a
//                          trace's drift series offline
//   phase [joins] [s]      what moves when the playout level rises: the arrivals and sends by
//                          sequence, our render count, the phase of the sender's bursts
//                          against our renders, per second (burst-phase.ts)
//   start [joins] [s]     a stream's first seconds at the receiver per 100 ms from its first
//                          arrival, sampled from the moment its network worker exists: renders,
//                          speaker steps, underruns, trims, target (start-up.ts)
//   tone [s] [rounds]      the sweep's sustained tone without Tutti: through the sound server's
//                          own loop, through A and B2, and through each beside a Tutti pair
//                          carrying the same tone; its dips, phase jumps and each page's speaker
//                          dropouts (tone-floor.ts)
//
// docs/BENCHMARKS.md, "Where the time goes", has the figures and what they mean.

import { rigUnavailable, startRig } from '../../../tests/support/audio-rig.ts';
import { burstPhase } from './burst-phase.ts';
import { outputOverTime } from './output-over-time.ts';
import { pairJoins } from './pair-joins.ts';
import { playoutTrace } from './playout-trace.ts';
import { probeJoins } from './probe-joins.ts';
import { startUp } from './start-up.ts';
import { toneFloor } from './tone-floor.ts';

const [mode, nArg, hintsArg] = process.argv.slice(2);
if (mode !== 'probe' && mode !== 'pair' && mode !== 'output' && mode !== 'trace' && mode !== 'tone' && mode !== 'phase' && mode !== 'start') {
  console.error('usage: npx tsx bench/m2e/segments/main.ts probe|pair|output|trace|tone|phase|start [n] [latency hints | seconds | rounds]');
  process.exit(2);
}
const why = rigUnavailable();
if (why) {
  console.log(`m2e segments skipped: ${why}`);
} else {
  const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);
  const rig = await startRig(log);
  try {
    if (mode === 'output') {
      const hints = (hintsArg ?? '0').split(',').map((h) => (/^[0-9.]+$/.test(h) ? Number(h) : (h as AudioContextLatencyCategory)));
      const rows = [];
      for (const h of hints) rows.push(await outputOverTime(rig, Number(nArg ?? 120), h, log));
      console.table(rows);
    } else if (mode === 'tone') {
      console.table(await toneFloor(rig, Number(nArg ?? 60), Number(hintsArg ?? 2), log));
    } else if (mode === 'phase') {
      console.table(await burstPhase(rig, Number(nArg ?? 1), Number(hintsArg ?? 60), log));
    } else if (mode === 'start') {
      console.table(await startUp(rig, Number(nArg ?? 8), Number(hintsArg ?? 6), log));
    } else if (mode === 'trace') {
      console.table(await playoutTrace(rig, Number(nArg ?? 2), Number(hintsArg ?? 150), log));
    } else {
      const n = Number(nArg ?? 4);
      console.table(mode === 'probe' ? await probeJoins(rig, n, log) : await pairJoins(rig, n, log));
    }
  } finally {
    await rig.close();
  }
}
