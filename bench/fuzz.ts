// Fuzz bench: 10^6 seeded hostile and valid packets through the receive path (tests/support/fuzz.ts),
// once straight through decoder + jitter writer + mixer, once through the network worker's own
// receiver (workers/receiver.ts) in Node. `runFuzzBench` is called by bench/run.ts; `tsx bench/fuzz.ts
// [--cases N] [--seed S]` runs it alone and prints a table.

import { fileURLToPath } from 'node:url';
import { reportRow, runFuzz, type FuzzReport } from '../tests/support/fuzz.ts';

export interface FuzzBenchResult {
  seed: number;
  cases: number;
  /** All properties held in every mode (failures lists the first ones otherwise). */
  ok: boolean;
  /** One row per mode, for console.table. */
  table: Array<Record<string, string | number>>;
  modes: Array<{
    mode: string;
    cases: number;
    casesPerSecond: number;
    ms: number;
    rejectedBy: Record<string, number>;
    accepted: number;
    fuzzPeer: FuzzReport['fuzzPeer'];
    canaryFramesChecked: number;
    failureCount: number;
    failures: string[];
  }>;
}

export async function runFuzzBench(opts: { cases: number; seed?: number }): Promise<FuzzBenchResult> {
  const seed = (opts.seed ?? Date.now()) >>> 0;
  const modes: FuzzBenchResult['modes'] = [];
  const rows: Array<Record<string, string | number>> = [];
  for (const mode of ['direct', 'worker'] as const) {
    const r = await runFuzz({ seed, cases: opts.cases, mode });
    const { ok: accepted = 0, ...rejectedBy } = r.actual;
    modes.push({
      mode,
      cases: r.cases,
      casesPerSecond: r.casesPerSecond,
      ms: r.ms,
      rejectedBy,
      accepted,
      fuzzPeer: r.fuzzPeer,
      canaryFramesChecked: r.canary.framesChecked,
      failureCount: r.failureCount,
      failures: r.failures,
    });
    rows.push(reportRow(r));
  }
  return { seed, cases: opts.cases, ok: modes.every((m) => m.failureCount === 0), modes, table: rows };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const arg = (name: string): number | undefined => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? Number(process.argv[i + 1]) : undefined;
  };
  const result = await runFuzzBench({ cases: arg('--cases') ?? 1_000_000, seed: arg('--seed') });
  console.table(result.table);
  for (const m of result.modes) {
    console.log(`${m.mode}: rejected by reason ${JSON.stringify(m.rejectedBy)}, accepted ${m.accepted}`);
    for (const f of m.failures) console.log(`  FAIL ${f}`);
  }
  console.log(result.ok ? `fuzz: all properties held (seed ${result.seed})` : `fuzz: FAILED (seed ${result.seed})`);
  process.exitCode = result.ok ? 0 : 1;
}
