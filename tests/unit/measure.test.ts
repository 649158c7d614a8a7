// Page-side measurement arithmetic: quality thresholds, the one-way delay formula, the stats
// history ring, the arrival-trace CSV and the median of the signaling round trips.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { QUANTUM_MS } from '../../src/shared/constants.ts';
import type { PeerStats, StatsMessage, TraceMessage } from '../../src/shared/worker-protocol.ts';
import { ONE_WAY_SECONDS, QUALITY_TIERS, oneWayDelay, quality, qualityInput, recentLatency, type QualityInput } from '../../src/ui/quality.ts';
import { StatsRecorder } from '../../src/engine/stats-recorder.ts';
import { TRACE_CSV_HEADER, traceToCsv } from '../../src/engine/trace-csv.ts';
import { median } from '../../src/shared/median.ts';

const excellent: QualityInput = { rttAvgMs: 4, rttMaxMs: 8, bufferMs: 2 * QUANTUM_MS, dropPercent: 0 };

describe('quality()', () => {
  test('JackTrip Virtual Studio Excellent: avg RTT < 10, max < 15, buffer < 6 ms', () => {
    assert.deepEqual(quality(excellent), { label: 'Excellent', reasons: [] });
    assert.equal(quality({ ...excellent, rttAvgMs: 9.99, rttMaxMs: 14.99, bufferMs: 5.99 }).label, 'Excellent');
  });

  test('each limit is strict and on its own drops a tier, with the reason named', () => {
    const avg = quality({ ...excellent, rttAvgMs: 10 });
    assert.equal(avg.label, 'Good');
    assert.deepEqual(avg.reasons, ['average RTT 10.0 ms ≥ 10 ms']);
    assert.equal(quality({ ...excellent, rttMaxMs: 15 }).label, 'Good');
    assert.equal(quality({ ...excellent, bufferMs: 3 * QUANTUM_MS }).label, 'Good'); // 8 ms ≥ 6 ms
    assert.equal(quality({ ...excellent, dropPercent: 0.1 }).label, 'Good');
  });

  test('tiers step down to Fair and Poor', () => {
    assert.equal(quality({ rttAvgMs: 24, rttMaxMs: 39, bufferMs: 11, dropPercent: 0.4 }).label, 'Good');
    assert.equal(quality({ rttAvgMs: 30, rttMaxMs: 39, bufferMs: 11, dropPercent: 0.4 }).label, 'Fair');
    assert.equal(quality({ rttAvgMs: 20, rttMaxMs: 30, bufferMs: 8 * QUANTUM_MS, dropPercent: 0 }).label, 'Fair'); // default depth: 21.3 ms
    const poor = quality({ rttAvgMs: 20, rttMaxMs: 30, bufferMs: 10, dropPercent: 5 });
    assert.equal(poor.label, 'Poor');
    assert.deepEqual(poor.reasons, ['glitches (late, lost, underrun, trimmed) 5.0 % ≥ 2 %']);
    assert.equal(quality({ rttAvgMs: 120, rttMaxMs: 200, bufferMs: 40, dropPercent: 10 }).reasons.length, 4);
  });

  test('tiers widen monotonically', () => {
    for (let i = 1; i < QUALITY_TIERS.length; i++) {
      const [a, b] = [QUALITY_TIERS[i - 1]!, QUALITY_TIERS[i]!];
      for (const k of ['rttAvgMs', 'rttMaxMs', 'bufferMs', 'dropPercent'] as const) assert.ok(b[k] > a[k], `${b.label}.${k}`);
    }
  });
});

function peer(over: Partial<PeerStats>): PeerStats {
  return {
    peerId: 'p', slot: 0, channelState: 'open', received: 0, late: 0, lost: 0, duplicates: 0, rejected: 0, rejectedBy: {},
    resyncs: 0, stale: 0, played: 0, missed: 0, concealed: 0, recovered: 0, underruns: 0, trimmed: 0, depth: 2,
    fill: { avg: 2, min: 1, held: 2, target: 2, relief: 0 }, percent: { late: 0, lost: 0, duplicates: 0, rejected: 0 }, rttMs: 5,
    ifdvMs: null, kbpsIn: 0, driftPpm: 0, driftSeconds: 60, rate: 1, bufferedAmount: 0, sendDropped: 0, sendRedundancy: 1, sendMono: false, sendBits: 16, bits: 16, loopbackRttMs: null, latencyMs: null, oneWayMs: null, framesPerSecond: 375, clock: null,
    ...over,
  };
}

describe('qualityInput()', () => {
  test('null until a round trip is known', () => {
    assert.equal(qualityInput([]), null);
    assert.equal(qualityInput([peer({ rttMs: null })]), null);
  });

  test('RTT avg/max over the last 10 samples; drops from the window growth, not the session', () => {
    // 12 samples: the first two (outside the window) hold a big RTT and most of the session's losses.
    const h: PeerStats[] = [];
    for (let i = 0; i < 12; i++) {
      h.push(peer({ rttMs: i < 2 ? 100 : i % 2 ? 6 : 4, received: 375 * i, lost: i < 2 ? 50 * i : 50 + (i - 1), late: 0, percent: { late: 0, lost: 99, duplicates: 0, rejected: 0 }, fill: { avg: 3, min: 2, held: 3, target: 3, relief: 0 } }));
    }
    const q = qualityInput(h)!;
    assert.equal(q.rttAvgMs, 5);
    assert.equal(q.rttMaxMs, 6);
    assert.equal(q.bufferMs, 3 * QUANTUM_MS);
    // window: samples 2..11 → lost grows 51→60 (9), received 750→4125 (3375)
    assert.ok(Math.abs(q.dropPercent - (100 * 9) / (3375 + 9)) < 1e-9, String(q.dropPercent));
    // Frames rebuilt from redundancy count as expected (the worker's denominator), not as drops.
    const withRecovered = h.map((p, i) => ({ ...p, recovered: 5 * i }));
    assert.ok(Math.abs(qualityInput(withRecovered)!.dropPercent - (100 * 9) / (3375 + 45 + 9)) < 1e-9);
  });

  test('a single sample counts the session: late, lost, underruns and trims are all glitches', () => {
    const d = qualityInput([peer({ received: 980, recovered: 0, late: 5, lost: 10, underruns: 3, trimmed: 2 })])!.dropPercent;
    assert.ok(Math.abs(d - (100 * 20) / 995) < 1e-9, String(d));
  });

  test('underruns and trims in the window lower the label like lost frames', () => {
    const h: PeerStats[] = [];
    for (let i = 0; i < 10; i++) h.push(peer({ rttMs: 4, received: 375 * i, late: 0, lost: 0, underruns: 4 * i, trimmed: 2 * i, fill: { avg: 2, min: 1, held: 2, target: 2, relief: 0 } }));
    const q = qualityInput(h)!;
    assert.ok(Math.abs(q.dropPercent - (100 * 54) / 3375) < 1e-9, String(q.dropPercent));
    assert.equal(quality(q).label, 'Fair', 'no frame late or lost, but 1.6 % of quanta glitched');
  });
});

describe('oneWayDelay()', () => {
  test('with the output clock: the measured capture → speaker time, split at our playout', () => {
    const d = oneWayDelay({ pipelineMs: 40, speakerMs: 63.5, outputLatencyS: 0.029, baseLatencyS: 0.0026666 });
    assert.equal(d.totalMs, 63.5);
    assert.equal(d.pipelineMs, 40);
    assert.equal(d.outputMs, 23.5);
    assert.equal(d.outputFrom, 'output clock');
  });

  test('without it: measured capture → playout + outputLatency + baseLatency', () => {
    const d = oneWayDelay({ pipelineMs: 40, speakerMs: null, outputLatencyS: 0.029, baseLatencyS: 0.0026666 });
    assert.equal(d.pipelineMs, 40);
    assert.ok(Math.abs(d.outputMs - 31.6666) < 1e-9);
    assert.ok(Math.abs(d.totalMs - 71.6666) < 1e-9);
    assert.equal(d.outputFrom, 'reported latency');
  });

  test('rejects nonsense input clearly', () => {
    assert.throws(() => oneWayDelay({ pipelineMs: -1, speakerMs: null, outputLatencyS: 0, baseLatencyS: 0 }), /pipelineMs must be a finite number ≥ 0/);
    assert.throws(() => oneWayDelay({ pipelineMs: 1, speakerMs: null, outputLatencyS: NaN, baseLatencyS: 0 }), /outputLatencyS/);
    assert.throws(() => oneWayDelay({ pipelineMs: 1, speakerMs: Infinity, outputLatencyS: 0, baseLatencyS: 0 }), /speakerMs/);
  });
});

describe('recentLatency()', () => {
  test('null before any latency figure', () => {
    assert.equal(recentLatency([]), null);
    assert.equal(recentLatency([peer({})]), null);
  });

  test('the median of the last seconds, so one second\'s burst phase does not move the display', () => {
    const lat = (p50: number, speaker: number | null) => peer({ latencyMs: { p50, p99: p50 + 5 }, oneWayMs: speaker === null ? null : { p50: speaker, p99: speaker + 5 } });
    const h = [lat(90, 120), lat(50, 80), lat(52, 81), lat(61, 92), lat(49, 79), lat(51, 80)];
    assert.equal(ONE_WAY_SECONDS, 5);
    assert.deepEqual(recentLatency(h), { pipelineMs: 51, speakerMs: 80 }, 'the first second is older than the window');
  });

  test('no output clock in the window: no speaker figure (the display falls back to the reported latency)', () => {
    assert.deepEqual(recentLatency([peer({ latencyMs: { p50: 40, p99: 44 } }), peer({ latencyMs: { p50: 42, p99: 44 } })]), { pipelineMs: 41, speakerMs: null });
  });
});

function statsMsg(i: number): StatsMessage {
  return { type: 'stats', sent: i, sendFramesPerSecond: 375, sendPacketsPerSecond: 375, perPacket: 1, captureOverflows: 0, captureLostFrames: 0, workerCpuMsPerSecond: 1, kbpsOut: 0, redundancy: 0, adaptive: true, traceFrames: 0, output: { events: 0, ms: 0 }, outputStalls: { count: 0, lostMs: 0 }, clock: { ref: 'self', refPeerId: null, offsetMs: 0, errorMs: 0, sharedMinusWallMs: 0 }, metronome: 'off', peers: [peer({ peerId: i % 2 ? 'odd' : 'even', received: i })] };
}

describe('StatsRecorder', () => {
  test('keeps the last `capacity` messages, oldest first, and notifies', () => {
    const r = new StatsRecorder(3);
    let calls = 0;
    const off = r.subscribe(() => calls++);
    assert.equal(r.latest(), null);
    for (let i = 0; i < 5; i++) r.push(statsMsg(i), 1000 + i);
    assert.equal(calls, 5);
    off();
    r.push(statsMsg(5), 1005);
    assert.equal(calls, 5);
    assert.deepEqual(r.samples().map((s) => [s.t, s.stats.sent]), [[1003, 3], [1004, 4], [1005, 5]]);
    assert.deepEqual(r.samples(2).map((s) => s.stats.sent), [4, 5]);
    assert.equal(r.latest()!.sent, 5);
    assert.deepEqual(r.peerHistory('odd').map((p) => p.received), [3, 5]);
    const ex = JSON.parse(JSON.stringify(r.export({ outputLatencyMs: 1, baseLatencyMs: 2 }, 10, new Date(0))));
    assert.equal(ex.format, 'tutti-stats/1');
    assert.equal(ex.exportedAt, '1970-01-01T00:00:00.000Z');
    assert.equal(ex.samples.length, 3);
    r.clear();
    assert.deepEqual(r.samples(), []);
  });

  test('rejects a bad capacity', () => {
    assert.throws(() => new StatsRecorder(0), /positive integer/);
  });
});

describe('traceToCsv()', () => {
  const trace: TraceMessage = {
    type: 'trace',
    peers: ['alice', 'b,"c"'],
    peer: Uint8Array.from([0, 1, 0]),
    seq: Uint32Array.from([7, 9, 8]),
    arrivalMs: Float64Array.from([100, 101.25, 102.5]),
    captureMs: Float64Array.from([50, 51, 52.6666]),
  };

  test('one row per frame, in recorded order, with quoted peer names', () => {
    assert.equal(traceToCsv(trace), `${TRACE_CSV_HEADER}\nalice,7,100.000,50.000\n"b,""c""",9,101.250,51.000\nalice,8,102.500,52.667\n`);
  });

  test('malformed traces are refused', () => {
    assert.throws(() => traceToCsv({ ...trace, seq: Uint32Array.from([1]) }), /column lengths differ/);
    assert.throws(() => traceToCsv({ ...trace, peers: ['alice'] }), /peer index 1 of 1/);
  });
});

test('median', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.throws(() => median([]), /empty/);
});
