// Issue 9's targets judged on one m2e run (bench/m2e/targets.ts, through bench/m2e/report.ts's
// summarise): each verdict from measurements made up for the purpose.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarise } from '../../bench/m2e/report.ts';
import type { AppFigures } from '../../bench/m2e/tutti-pair.ts';
import { parseArgs } from '../../bench/lib/config.ts';
import { emptyM2eResult, type M2eMeasurement, type M2eResult, type SetupName } from '../../bench/scenarios/m2e.ts';

function app(over: Partial<AppFigures> = {}): AppFigures {
  return {
    adaptive: true, depth: 11, depthMin: 11, depthMax: 11, fillAvg: 11, fillMin: 10, addedP50Ms: 57, addedP99Ms: 60,
    oneWayMs: 85, oneWayParts: null, oneWayStatMs: 85, oneWaySeconds: [], rttMs: 2, driftPpm: -35, beforeWindow: null,
    underruns: 0, trimmed: 0, late: 0, lost: 0, concealed: 0, speakerDropouts: 0, speakerDropoutMs: 0, outputStalls: 0,
    outputStalledMs: 0, senderDropped: 0, framesPerSecond: 375, driftMinPpm: -35, driftMaxPpm: -35, glitchSeconds: [], ...over,
  };
}

function m(setup: SetupName, round: number, medianMs: number, a: AppFigures | null = null, rig: [number, number] = [40, 70]): M2eMeasurement {
  return {
    setup, round, depth: a ? (a.adaptive ? 'auto' : a.depth) : null, app: a, info: null, fifo: null, machineBusyPercent: 40, hostStealPercent: 0, hostStealPeakPercent: 0,
    gapsMs: [medianMs], heardAtMs: [null], medianMs, minMs: medianMs, maxMs: medianMs, p10Ms: medianMs, p90Ms: medianMs,
    missing: 0, doubled: 0, strays: 0, directMissing: 0, slopeMsPerS: 0, mouthRatePpm: rig[0], speakerRatePpm: rig[1],
    datingP90Ms: 1, mouthSinkLatencyMs: 21.3, speakerSinkLatencyMs: 10.7,
  };
}

/** Five rounds like the run at 90a293f: A ~71, W ~147, C default ~85, B2 − A ~12, a clean manual 9. */
function goodRun(): M2eResult {
  const r = emptyM2eResult(parseArgs([]).m2e);
  const a = [74.7, 71.4, 68.1, 71.7, 70.2];
  const c = [85.1, 84.8, 94.7, 83.8, 84.9];
  a.forEach((x, i) => {
    const round = i + 1;
    r.measurements.push(
      m('A', round, x),
      m('B2', round, x + 12.3),
      m('W', round, x + 75),
      m('C default', round, c[i]!, app({ oneWayStatMs: c[i]! + 1 })),
      m('C settled', round, c[i]! + 2, app({ oneWayStatMs: c[i]! + 2, driftPpm: -31 })),
      m('C clean depth', round, x + 9.5, app({ adaptive: false, depth: 9, oneWayStatMs: x + 10 })),
    );
  });
  r.smallestCleanDepth = r.smallestPlayoutCleanDepth = 9;
  summarise(r);
  return r;
}

const verdicts = (r: M2eResult) => r.targets.map((t) => t.verdict);

test('a run that meets every target says so, with its figures', () => {
  const r = goodRun();
  assert.deepEqual(verdicts(r), Array(8).fill('met'));
  assert.match(r.targets[0]!.figure, /^13\.4 \(/, 'C default − A: the median over rounds');
  assert.match(r.targets[1]!.figure, /^9\.5 at 9 \(clean;/);
  assert.match(r.targets[1]!.figure, /B2 − A: 12\.3$/);
  // The rig's drift, 40 ppm at the microphone against 70 at the speaker: −30 ppm; the app read −31.
  assert.match(r.targets[7]!.figure, /^5 of 5 \(-1, /);
});

test('above 10 ms at the smallest clean depth, but no higher than the same path without Tutti: at the floor', () => {
  const r = goodRun();
  for (const x of r.measurements) if (x.setup === 'C clean depth') x.medianMs! += 2.5; // C clean − A 12.0 ≤ B2 − A 12.3
  r.smallestCleanDepth = null; // played clean, not strictly
  summarise(r);
  assert.equal(r.targets[1]!.verdict, 'at the floor');
  assert.match(r.targets[1]!.figure, /^12 at 9 \(played clean/);
  for (const x of r.measurements) if (x.setup === 'C clean depth') x.medianMs! += 1;
  summarise(r);
  assert.equal(r.targets[1]!.verdict, 'not met', 'above the floor as well');
});

test('one round with W less than 40 ms behind, a wandering depth, a glitch, a wide spread, a figure off: each fails on its own', () => {
  const r = goodRun();
  const w = r.measurements.find((x) => x.setup === 'W' && x.round === 2)!;
  w.medianMs = 71.4 + 13.4 + 39.9;
  const join = r.measurements.find((x) => x.setup === 'C settled' && x.round === 4)!;
  join.app = app({ depth: 14, trimmed: 3, oneWayStatMs: join.medianMs! + 6, driftPpm: 10 });
  r.measurements.find((x) => x.setup === 'C default' && x.round === 5)!.medianMs = 70.2 + 34;
  summarise(r);
  assert.deepEqual(verdicts(r), ['met', 'met', 'not met', 'not met', 'not met', 'not met', 'not met', 'not met']);
  assert.match(r.targets[4]!.figure, /^0\/3\/0\/0, sender 0, in 10 windows/);
});

test('a short run (no sweep, no settled join) has no data for what it did not measure', () => {
  const r = emptyM2eResult(parseArgs(['--short']).m2e);
  r.measurements.push(m('A', 1, 80), m('W', 1, 150), m('C default', 1, 90, app()));
  summarise(r);
  assert.deepEqual(verdicts(r), ['met', 'no data', 'met', 'met', 'met', 'met', 'met', 'no data']);
});

test('glitches at the default: only trims of what our output\'s stalls left are the floor, anything else is not met', () => {
  const r = goodRun();
  const join = r.measurements.find((x) => x.setup === 'C settled' && x.round === 2)!;
  join.app = app({ trimmed: 9, outputStalls: 2, outputStalledMs: 19, oneWayStatMs: join.medianMs, driftPpm: -31 }); // 7 quanta + 2
  summarise(r);
  assert.equal(r.targets[4]!.verdict, 'at the floor');
  join.app.trimmed = 10;
  summarise(r);
  assert.equal(r.targets[4]!.verdict, 'not met', 'a trim beyond the stalls\' backlog is the playout\'s own');
  join.app.trimmed = 0;
  join.app.underruns = 1;
  summarise(r);
  assert.equal(r.targets[4]!.verdict, 'not met', 'an underrun is never the output\'s');
  join.app.senderOutputStalls = 1;
  join.app.senderOutputStalledMs = 32;
  summarise(r);
  assert.equal(r.targets[4]!.verdict, 'not met', 'the sender\'s output stalls do not excuse an underrun: its sends do not run on that clock');
  assert.match(r.targets[4]!.figure, /the sender's 1/);
});
