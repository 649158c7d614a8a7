import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { QUANTUM_FRAMES, SAMPLE_RATE } from '../../src/shared/constants.ts';
import { MET_F32, MET_F64, MET_I32, MetronomeViews, createMetronomeMemory } from '../../src/shared/memory-layout.ts';
import { DEFAULT_METRONOME, beatPosition, checkBpm, isAccented, parseMetronome, tapTempo, type MetronomeState } from '../../src/shared/metronome.ts';
import { advanceFor, started, withTempo } from '../../src/room/metronome-control.ts';
import type { MemberState } from '../../src/shared/signaling-protocol.ts';
import { MetronomeSchedule } from '../../workers/metronome-schedule.ts';
import { HOLD_AHEAD_MS, ONE_WAY_FRESH_MS, OneWayReports, REPORT_WINDOW_MS, RISE_CONFIRM_MS, RISE_JUMP_MS } from '../../workers/one-way-reports.ts';
import { SpeakerTime } from '../../workers/speaker-time.ts';
import { ClickTrack } from '../../worklets/click-track.ts';

const running = (over: Partial<MetronomeState> = {}): MetronomeState => ({ ...DEFAULT_METRONOME, startMs: 10_000, ...over });

describe('metronome state', () => {
  test('parse keeps a good state and refuses what no one could have meant', () => {
    assert.deepEqual(parseMetronome(running()), running());
    assert.deepEqual(parseMetronome({ ...running(), mode: 'leader', leader: 7 }), { ...running(), mode: 'leader', leader: 7 });
    for (const bad of [null, 3, { ...running(), bpm: 10 }, { ...running(), bpm: 301 }, { ...running(), bpm: NaN }, { ...running(), beatsPerBar: 2.5 }, { ...running(), beatsPerBar: 13 },
      { ...running(), countInBars: 3 }, { ...running(), accent: 'yes' }, { ...running(), mode: 'solo' }, { ...running(), mode: 'leader', leader: null }, { ...running(), startMs: '1' }]) {
      assert.equal(parseMetronome(bad), null, JSON.stringify(bad));
    }
  });

  test('tempo as typed: a number in range, or a message', () => {
    assert.deepEqual(checkBpm(' 92.25 '), { bpm: 92.3 });
    assert.ok('error' in checkBpm('fast'));
    assert.ok('error' in checkBpm(''));
    assert.ok('error' in checkBpm('400'));
  });

  test('beats: count-in bars, then bar 1; accents on the first beat of each bar', () => {
    const m = running({ beatsPerBar: 3, countInBars: 1 });
    assert.deepEqual(beatPosition(m, 0), { bar: 0, beat: 1, countIn: true });
    assert.deepEqual(beatPosition(m, 2), { bar: 0, beat: 3, countIn: true });
    assert.deepEqual(beatPosition(m, 3), { bar: 1, beat: 1, countIn: false });
    assert.deepEqual(beatPosition(m, 7), { bar: 2, beat: 2, countIn: false });
    assert.equal(isAccented(m, 3), true);
    assert.equal(isAccented(m, 4), false);
    assert.equal(isAccented({ ...m, accent: false }, 3), false);
  });

  test('tap tempo: the median interval of the latest run of taps', () => {
    assert.equal(tapTempo([1000]), null);
    assert.equal(tapTempo([0, 500]), 120);
    assert.equal(tapTempo([0, 500, 1010, 1500, 2000]), 120); // one tap off by 10 ms does not move it
    assert.equal(tapTempo([0, 1000, 5000, 5600]), 100); // a pause starts again
    assert.equal(tapTempo([0, 2500]), null); // too slow: a new run of one tap
  });

  test('a tempo change while running keeps the next beat and its number', () => {
    const m = running({ bpm: 120 });
    const now = 10_000 + 10 * 500 + 100; // just after beat 10
    const c = withTempo(m, 90, now);
    // Beat 11 would come 400 ms from now: over the change lead, so it stays where it was.
    const n = 11;
    assert.ok(Math.abs(c.startMs! + n * (60_000 / 90) - (10_000 + n * 500)) < 1e-6);
    assert.deepEqual(withTempo({ ...m, startMs: null }, 90, now), { ...m, startMs: null, bpm: 90 });
    assert.equal(started(DEFAULT_METRONOME, 5000).startMs, 6500);
  });

  test('leader mode: a member is advanced by the one-way delay the leader publishes from them', () => {
    const member = (quality?: MemberState['quality']): MemberState => ({ v: 1, name: 'L', role: 'teacher', instrument: '', muted: false, format: 'stereo', kind: 'participant', ...(quality ? { quality } : {}) });
    const m = running({ mode: 'leader', leader: 1 });
    const roster = new Map<number, MemberState>([[1, member({ heard: { '2': { glitchPercent: 0, rttMs: 1, oneWayMs: 42.5 } }, inputDb: -20, clipping: false, depth: 4 })]]);
    assert.deepEqual(advanceFor(m, 2, roster), { ms: 42.5, why: 'leader' });
    assert.deepEqual(advanceFor(m, 1, roster), { ms: 0, why: 'leader' });
    assert.deepEqual(advanceFor(m, 3, roster), { ms: 0, why: 'measuring' });
    assert.deepEqual(advanceFor(m, 2, new Map()), { ms: 0, why: 'leader-gone' });
    assert.deepEqual(advanceFor(running(), 2, roster), { ms: 0, why: 'together' });
  });
});

/** A speaker whose context time 0 plays at wall time `zeroMs` (readings four a second). */
function speakerAt(zeroMs: number, nowMs: number): SpeakerTime {
  const s = new SpeakerTime();
  for (let t = 1; t <= 9; t++) s.add(t / 4, zeroMs + (t / 4) * 1000);
  void nowMs;
  return s;
}

describe('metronome at the speaker', () => {
  test('the schedule puts beat n at the frame that reaches the speaker at its shared time, advance and offsets included', () => {
    const views = new MetronomeViews(createMetronomeMemory());
    const sched = new MetronomeSchedule(views);
    const wall = 1_000_000;
    const speaker = speakerAt(wall - 2000, wall); // context time 0 played 2 s ago
    const m = running({ bpm: 120, startMs: wall + 500 + 30 }); // shared clock = ours + 30 ms
    sched.set(m, 12);
    sched.tick({ ownMs: wall + 7, wallMs: wall, sharedOffsetMs: 23 }, speaker); // our clock 7 ms ahead of the wall clock
    assert.equal(sched.status, 'running');
    const f = views.f64;
    assert.equal(f[MET_F64.RUNNING], 1);
    const k = f[MET_F64.BEAT]!;
    // Beat k sounds at shared start + 500k − 12 = wall + 500 + 500k − 12 (shared − wall = 30).
    const expectWall = wall + 500 + 500 * k - 12;
    const expectFrame = (expectWall - (wall - 2000)) * (SAMPLE_RATE / 1000);
    assert.ok(Math.abs(f[MET_F64.BEAT_FRAME]! - expectFrame) < 1e-6, `${f[MET_F64.BEAT_FRAME]} vs ${expectFrame}`);
    assert.ok(Math.abs(f[MET_F64.FRAMES_PER_BEAT]! - 24_000) < 1e-6);
    assert.equal(Atomics.load(views.i32, MET_I32.GEN) % 2, 0);
    // The playOnBeat switch finds the same beat in the quantum captured when it reaches our speaker.
    const o = sched.beatInQuantum(expectWall - 1);
    assert.equal(o, 48);
    assert.equal(sched.beatInQuantum(expectWall + 1), -1);
    sched.tick({ ownMs: wall, wallMs: wall, sharedOffsetMs: null }, speaker);
    assert.equal(sched.status, 'no-clock');
    assert.equal(f[MET_F64.RUNNING], 0);
  });

  test("leader mode: the leader's fresh report on the audio channel sets the advance; without one the page's figure stands", () => {
    const views = new MetronomeViews(createMetronomeMemory());
    const sched = new MetronomeSchedule(views);
    const wall = 1_000_000;
    const speaker = speakerAt(wall - 2000, wall);
    const m = running({ bpm: 120, startMs: wall + 500 });
    sched.set(m, 70);
    const frameWith = (reported: number | null): number => {
      sched.tick({ ownMs: wall, wallMs: wall, sharedOffsetMs: 0 }, speaker, reported);
      const k = views.f64[MET_F64.BEAT]!;
      // Back to the time of beat 0 for a comparison across anchors.
      return views.f64[MET_F64.BEAT_FRAME]! - k * views.f64[MET_F64.FRAMES_PER_BEAT]!;
    };
    const page = frameWith(null);
    const reported = frameWith(80.5);
    assert.ok(Math.abs(page - reported - 10.5 * 48) < 1e-6, `the report's 10.5 ms more advance: ${page - reported} frames`);
    assert.ok(Math.abs(frameWith(null) - page) < 1e-6, 'the report gone stale: the page figure again');
  });

  test('the one-way reports: the median of the last 0.4 s, newest report wins, stale after a second, nonsense ignored', () => {
    const r = new OneWayReports();
    assert.equal(r.report(0), null);
    for (const [k, ms] of [70, 71, 90, 72, 70.5, 71.5, 69, 73].entries()) r.add(ms, 100 + k);
    assert.equal(r.report(110), 71.25);
    assert.equal(r.report(100 + 7 + REPORT_WINDOW_MS), null, 'one packet left in the window: too few for a median');
    // A burst that jumps for 0.15 s among 0.4 s of steady packets does not move the report.
    const q = new OneWayReports();
    let t = 1000;
    for (let i = 0; i < 94; i++) q.add(73, (t += 2.67));
    for (let i = 0; i < 56; i++) q.add(100, (t += 2.67));
    assert.equal(q.report(t), 73);
    for (let i = 0; i < 2000; i++) q.add(i < 1900 ? 10 : 60, t);
    assert.equal(q.report(t), 10, 'a burst at one instant: the newest 512 packets (100 × 60 ms, 412 × 10 ms)');
    assert.equal(r.theirs(0), null);
    r.received(5, 73.2, 100);
    r.received(4, 80, 120); // an older report delivered late by the unordered channel
    assert.equal(r.theirs(150), 73.2);
    r.received(6, 20_000, 130); // not a delay
    assert.equal(r.theirs(150), 73.2);
    r.received(0x80000005, 60, 140); // ids wrap: far away counts as older
    assert.equal(r.theirs(150), 73.2);
    assert.equal(r.theirs(100 + ONE_WAY_FRESH_MS), 73.2);
    assert.equal(r.theirs(101 + ONE_WAY_FRESH_MS), null, 'stale');
    r.received(7, 74, 2000);
    assert.equal(r.theirs(2000), 74);
  });

  test("the leader's reports on the member's side: a jump over RISE_JUMP_MS counts once it has lasted RISE_CONFIRM_MS; a small rise and a fall at once", () => {
    const r = new OneWayReports();
    let id = 0;
    let t = 10_000;
    const report = (ms: number): number | null => {
      r.received(++id, ms, (t += 100));
      return r.theirs(t);
    };
    for (let i = 0; i < 10; i++) assert.equal(report(71), 71);
    // The leader's stall, seen in its reports for 0.2 s before its page saw the step (the quiet
    // run of 2026-12-02: 90.6 ms twice between 71 and 74; the member struck 16 ms early by it).
    assert.equal(report(90.6), 71, 'a jump is not taken at once');
    assert.equal(report(90.6), 71, 'nor 0.1 s later');
    assert.equal(report(74), 74, 'a rise of about a quantum is taken at once (beat 138, 3.5 ms late when it waited)');
    for (let i = 0; i < 5; i++) report(71);
    assert.equal(report(71 + RISE_JUMP_MS), 71 + RISE_JUMP_MS, 'two quanta: at once');
    for (let i = 0; i < 5; i++) report(71);
    // A jump that lasts (a long hold-up upstream) is taken once it has held RISE_CONFIRM_MS.
    const steps = RISE_CONFIRM_MS / 100;
    for (let i = 0; i < steps; i++) assert.equal(report(85), 71, `not yet at ${i * 100} ms`);
    assert.equal(report(85), 85, `taken after ${RISE_CONFIRM_MS} ms`);
    assert.equal(report(70), 70, 'a fall at once');
    // Several reports at one instant (our own stall let them pile up): the jump has not lasted.
    for (const ms of [90, 89, 91]) r.received(++id, ms, t + 50);
    assert.equal(r.theirs(t + 50), 70, 'the jump has not lasted yet');
    // Stale: nothing, however low the last ones were.
    assert.equal(r.theirs(t + 51 + ONE_WAY_FRESH_MS), null);
  });

  test('the one-way reports through a stall of this machine: its burst and backlog are left out (hold)', () => {
    const r = new OneWayReports();
    let t = 1000;
    for (let i = 0; i < 100; i++) r.add(73, (t += 2.67)); // steady
    // The stall: 19 packets at once, then 0.13 s of backlog (and misdated ones) until the step is followed.
    for (let i = 0; i < 19; i++) r.add(30 + i, t);
    for (let i = 0; i < 49; i++) r.add(100, (t += 2.67));
    r.hold(t);
    const held = t;
    assert.equal(r.report(t), 73, 'only the packets from before the stall');
    for (let i = 0; i < 30; i++) r.add(120, (t += 2.67)); // within HOLD_AHEAD_MS: not taken (the trim is under way)
    assert.ok(t - held < HOLD_AHEAD_MS);
    assert.equal(r.report(t), 73);
    for (let i = 0; i < 200; i++) r.add(74, (t += 2.67)); // after the trim
    assert.equal(r.report(t), 74);
    // A backlog first seen (a burst after a hold-up upstream): the packets that brought it go, with
    // nothing taken off them; those after come less the trim to come.
    const b = new OneWayReports();
    t = 2000;
    for (let i = 0; i < 100; i++) b.add(73, (t += 2.67));
    for (let i = 0; i < 60; i++) b.add(101, (t += 2.67)); // 0.16 s before the fill windows showed it
    for (let i = 0; i < 40; i++) b.add(101 - 27, (t += 2.67), true);
    assert.equal(b.report(t), 74, "without the drop: 101");
    // More packets than the store holds, then a hold: the older ones are still read right.
    const q = new OneWayReports();
    for (let i = 0; i < 600; i++) q.add(60, 5000 + i);
    for (let i = 0; i < 400; i++) q.add(90, 5899); // the store keeps the newest 512: 112 of the 60s
    q.hold(5899);
    assert.equal(q.report(5899), 60);
  });

  test('the worklet starts each click at its sample, once, accented on the bar, plays a beat up to 50 ms late at once and skips one later than that', () => {
    const views = new MetronomeViews(createMetronomeMemory());
    views.f32[MET_F32.GAIN] = 1;
    const track = new ClickTrack(views, SAMPLE_RATE);
    const f = views.f64;
    const publish = (frame: number, beat = 0): void => {
      Atomics.add(views.i32, MET_I32.GEN, 1);
      f[MET_F64.RUNNING] = 1;
      f[MET_F64.RUN_ID] = 1;
      f[MET_F64.BEAT] = beat;
      f[MET_F64.BEAT_FRAME] = frame;
      f[MET_F64.FRAMES_PER_BEAT] = 3000.4;
      f[MET_F64.BEATS_PER_BAR] = 4;
      f[MET_F64.ACCENT] = 1;
      Atomics.add(views.i32, MET_I32.GEN, 1);
    };
    publish(1000 + 37);
    const onsets: number[] = [];
    const peaks: number[] = [];
    const l = new Float32Array(QUANTUM_FRAMES);
    const r = new Float32Array(QUANTUM_FRAMES);
    let quiet = 2000;
    for (let q = 0; q < 160; q++) {
      l.fill(0);
      r.fill(0);
      const frame = q * QUANTUM_FRAMES;
      track.render(l, r, frame);
      for (let i = 0; i < QUANTUM_FRAMES; i++) {
        if (Math.abs(l[i]!) > 0.05 && quiet > 1000) {
          onsets.push(frame + i);
          peaks.push(Math.abs(l[i]!));
        }
        quiet = Math.abs(l[i]!) < 0.001 ? quiet + 1 : 0;
      }
      assert.deepEqual(r, l);
    }
    // Beats 0..6 at 1037 + 3000.4 n, each to the nearest sample.
    assert.deepEqual(onsets, [0, 1, 2, 3, 4, 5, 6].map((n) => Math.round(1037 + 3000.4 * n)));
    assert.equal(peaks[0], 1); // beat 0: accented
    assert.ok(Math.abs(peaks[1]! - 0.6) < 1e-6);
    assert.equal(peaks[4], 1); // beat 4: the next bar
    assert.equal(Atomics.load(views.i32, MET_I32.CLICKED_BEAT), 6);
    assert.equal(f[MET_F64.CLICKED_AT], Math.round(1037 + 3000.4 * 6) / SAMPLE_RATE);
    // An output step carries beat 8 into the past: it should have started 500 frames (10 ms) ago.
    // It starts at once, at this quantum's first sample: late by the step, not a hole in the pulse.
    let at = 160 * QUANTUM_FRAMES;
    publish(at - 500, 8);
    l.fill(0);
    track.render(l, r, at);
    assert.ok(Math.abs(l[0]!) > 0.5, 'beat 8 starts at the quantum\'s first sample');
    assert.equal(Atomics.load(views.i32, MET_I32.CLICKED_BEAT), 8);
    assert.equal(f[MET_F64.CLICKED_AT], at / SAMPLE_RATE);
    // The schedule jumps by more than MAX_LATE_MS (50 ms): beat 20 should have started 2500
    // frames (52 ms) ago. It is skipped, not played as a stray click.
    for (let q = 161; q < 175; q++) track.render(l, r, q * QUANTUM_FRAMES); // beat 8's click ends (30 ms), before beat 9
    at = 175 * QUANTUM_FRAMES;
    publish(at - 2500, 20);
    l.fill(0);
    track.render(l, r, at);
    assert.ok(l.every((x) => x === 0));
    assert.equal(Atomics.load(views.i32, MET_I32.CLICKED_BEAT), 8);
  });
});
