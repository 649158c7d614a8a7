// The shared clock (issue 12, item 1): the per-peer estimator on simulated exchanges, the shared
// clock through a hand-over, the room's choice of reference, and the v3 clock packets.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PeerClock, SharedClock, askEveryMs } from '../../workers/clock-sync.ts';
import { mulberry32 } from './prng.ts';
import { decideClock } from '../../src/room/shared-clock.ts';
import type { ClockState, MemberState } from '../../src/shared/signaling-protocol.ts';
import { CLOCK, ControlKind, Reject, VERSION_PCM24, decodeHeader, encodeClockReply, encodeClockRequest, newHeader } from '../../src/shared/wire.ts';

const rng = mulberry32;

/**
 * Exchanges every 250 ms between us and a peer whose clock = ours + offset + ppm·1e-6·t; each
 * direction takes `base` ms plus a random queueing delay (heavy-tailed: a busy worker), chosen
 * independently. Returns the estimator and the true offset at the end.
 */
function simulate(opts: { seconds: number; offset: number; ppm: number; base: number; jitter: number; seed: number }): { clock: PeerClock; truth: (t: number) => number; end: number } {
  const r = rng(opts.seed);
  const t0 = 1.79e12;
  const peerOf = (t: number) => t + opts.offset + opts.ppm * 1e-6 * (t - t0);
  const delay = () => opts.base + (r() < 0.7 ? r() * 0.2 : r() * opts.jitter);
  const clock = new PeerClock();
  let t = t0;
  for (let i = 0; i < opts.seconds * 4; i++, t += 250) {
    const t1 = t;
    const arrive = t1 + delay();
    const t2 = peerOf(arrive);
    const answer = arrive + r() * 0.05;
    const t3 = peerOf(answer);
    const t4 = answer + delay();
    clock.add(t1, t2, t3, t4);
  }
  return { clock, truth: (x: number) => peerOf(x) - x, end: t };
}

describe('PeerClock', () => {
  test('a fixed offset on a quiet link: within 0.05 ms after 5 s, error bound covers it', () => {
    const { clock, truth, end } = simulate({ seconds: 5, offset: 37.5, ppm: 0, base: 0.15, jitter: 3, seed: 1 });
    const e = clock.estimate!;
    assert.ok(Math.abs(clock.offsetAt(end)! - truth(end)) < 0.05, `offset ${clock.offsetAt(end)} vs ${truth(end)}`);
    assert.ok(e.errorMs >= Math.abs(clock.offsetAt(end)! - truth(end)));
    assert.ok(Math.abs(e.driftPpm) < 50, `drift ${e.driftPpm} ppm where the truth is 0`);
  });

  test('drift: +300 ppm tracked to a few ppm over 2 minutes, the offset within 0.1 ms throughout', () => {
    const r = rng(7);
    const t0 = 1.79e12;
    const truth = (t: number) => -12 + 300e-6 * (t - t0);
    const clock = new PeerClock();
    let worst = 0;
    for (let i = 0, t = t0; i < 120 * 4; i++, t += 250) {
      const t1 = t;
      const arrive = t1 + 0.2 + (r() < 0.5 ? 0 : r() * 5);
      const t2 = arrive + truth(arrive);
      const t3 = t2 + 0.01;
      const t4 = arrive + 0.01 + 0.2 + (r() < 0.5 ? 0 : r() * 5);
      clock.add(t1, t2, t3, t4);
      if (i >= 40) worst = Math.max(worst, Math.abs(clock.offsetAt(t4)! - truth(t4)));
    }
    assert.ok(worst < 0.1, `worst offset error ${worst} ms`);
    assert.ok(Math.abs(clock.estimate!.driftPpm - 300) < 5, `drift ${clock.estimate!.driftPpm}`);
  });

  test('one direction always slower: the offset is off by half the asymmetry, and the error bound says so', () => {
    const clock = new PeerClock();
    for (let i = 0, t = 1e12; i < 40; i++, t += 250) clock.add(t, t + 5 + 3, t + 5 + 3.01, t + 3.01 + 1); // 3 ms out, 1 ms back, offset 5
    const e = clock.estimate!;
    assert.ok(Math.abs(e.offsetMs - 6) < 1e-6, `offset ${e.offsetMs}: (3 − 1) / 2 = 1 ms off the true 5`);
    assert.ok(e.errorMs >= 1, `error bound ${e.errorMs} covers the 1 ms`);
  });

  test('a loaded machine: one side busy most of the time, the other now and then; the offset within 0.1 ms throughout, drift to a few ppm', () => {
    // Three browsers on two cores (CI): a worker that is busy when a clock packet comes stamps it
    // late, so that leg of the exchange is long; the two sides are busy independently. Here the
    // peer's side (the request's leg) is held up in 85 % of exchanges, by 2 ms on average (up to
    // 20), ours (the reply's leg) in 30 %, by 0.5 ms, and for 5 s in every 20 the peer's in all
    // of them. The peer's clock is 40 ms ahead and 300 ppm fast, as the e2e test's Carol.
    const r = rng(11);
    const t0 = 1.79e12;
    const truth = (t: number) => 40 + 300e-6 * (t - t0);
    const held = (p: number, mean: number) => (r() < p ? Math.min(20, -mean * Math.log(1 - r())) : 0);
    const clock = new PeerClock();
    let worst = 0;
    let worstBound = Infinity;
    for (let i = 0, t = t0; i < 120 * 4; i++, t += 250) {
      const busy = (i / 4) % 20 < 5;
      const t1 = t;
      const arrive = t1 + 0.15 + r() * 0.1 + held(busy ? 1 : 0.85, 2);
      const t2 = arrive + truth(arrive);
      const t3 = t2 + 0.02;
      const t4 = arrive + 0.02 + 0.15 + r() * 0.1 + held(0.3, 0.5);
      clock.add(t1, t2, t3, t4);
      if (i >= 40) {
        const err = Math.abs(clock.offsetAt(t4)! - truth(t4));
        worst = Math.max(worst, err);
        worstBound = Math.min(worstBound, clock.estimate!.errorMs - err);
      }
    }
    console.log(`a loaded machine: worst offset error ${worst.toFixed(3)} ms, least margin of the bound ${worstBound.toFixed(3)} ms`);
    assert.ok(worst < 0.1, `worst offset error ${worst.toFixed(3)} ms`);
    assert.ok(worstBound >= 0, `the error bound covers the error (least margin ${worstBound.toFixed(3)} ms)`);
    assert.ok(Math.abs(clock.estimate!.driftPpm - 300) < 5, `drift ${clock.estimate!.driftPpm}`);
  });

  test('a join: the peer\'s side late in 95 % of exchanges for 15 s; asked at the rate askEveryMs gives, within 0.25 ms 12 s in, where four a second misses by over 1 ms', () => {
    // The start-up of a newcomer on a loaded two-core machine (CI: the first figure 10 s after
    // following 1.0–1.4 ms off in five runs): its receiving leg held 1–6 ms in all but 5 % of
    // exchanges for the first 15 s, ours in half of them.
    const run = (seed: number, every: (sinceFirstMs: number) => number): number => {
      const r = rng(seed);
      const t0 = 1.79e12;
      const truth = (t: number) => 40 + 300e-6 * (t - t0);
      const held = (clean: number) => (r() < clean ? r() * 0.1 : 1 + 5 * r());
      const clock = new PeerClock();
      let t = t0;
      while (t < t0 + 12_000) {
        const arrive = t + 0.3 + held(t - t0 < 15_000 ? 0.05 : 0.5);
        const t2 = arrive + truth(arrive);
        clock.add(t, t2, t2 + 0.01, arrive + 0.31 + held(0.5));
        t += every(t - t0);
      }
      return Math.abs(clock.offsetAt(t)! - truth(t));
    };
    const seeds = Array.from({ length: 150 }, (_, i) => i + 1);
    const fast = Math.max(...seeds.map((s) => run(s, askEveryMs)));
    const slow = Math.max(...seeds.map((s) => run(s, () => 250)));
    assert.ok(fast < 0.25, `asked at askEveryMs: ${fast.toFixed(3)} ms off at worst`);
    assert.ok(slow > 1, `four a second: only ${slow.toFixed(3)} ms off at worst`);
  });

  test('replies handed over out of turn (an unordered channel) read the same as in order', () => {
    const stamps: [number, number, number, number][] = [];
    const r = rng(5);
    for (let i = 0, t = 1e12; i < 60 * 4; i++, t += 250) {
      const a = t + 0.2 + r() * 2;
      stamps.push([t, a + 7 + 50e-6 * (a - 1e12), a + 7.01 + 50e-6 * (a - 1e12), a + 0.01 + 0.2 + r() * 2]);
    }
    const inOrder = new PeerClock();
    for (const s of stamps) inOrder.add(...s);
    const swapped = new PeerClock();
    for (let i = 0; i < stamps.length; i += 2) {
      // Each pair's second reply taken first (its own stamps: the order of the calls is what differs).
      swapped.add(...stamps[i + 1]!);
      swapped.add(...stamps[i]!);
    }
    const end = stamps[stamps.length - 1]![3];
    assert.ok(Math.abs(inOrder.offsetAt(end)! - swapped.offsetAt(end)!) < 0.05, `${inOrder.offsetAt(end)} and ${swapped.offsetAt(end)}`);
    assert.ok(Math.abs(swapped.estimate!.driftPpm - 50) < 5, `drift ${swapped.estimate!.driftPpm}`);
  });

  test('nonsense exchanges are not kept', () => {
    const clock = new PeerClock();
    assert.equal(clock.add(10, 20, 19, 30), false, 'replied before it was asked');
    assert.equal(clock.add(10, 20, 21, 5), false, 'answer before the request');
    assert.equal(clock.add(10, 20, 21, 10 + 600), false, 'a 600 ms round trip');
    assert.equal(clock.add(10, NaN, 21, 12), false);
    assert.equal(clock.estimate, null);
  });
});

describe('SharedClock', () => {
  test('as reference: our clock plus the base; following: the peer plus its base; a hold runs on at the departed peer\'s rate', () => {
    const { clock, end } = simulate({ seconds: 5, offset: 20, ppm: 0, base: 0.1, jitter: 1, seed: 3 });
    const s = new SharedClock();
    assert.equal(s.offsetAt(end), null, 'nothing to follow yet');
    s.ref = { kind: 'self', baseMs: 4 };
    assert.equal(s.offsetAt(end), 4);
    assert.equal(s.errorMs, 0);
    s.ref = { kind: 'peer', peer: clock, baseMs: 4 };
    assert.ok(Math.abs(s.offsetAt(end)! - 24) < 0.1, `shared offset ${s.offsetAt(end)}`);
    const held = s.offsetAt(end)!;
    s.ref = { kind: 'hold' };
    // A clock at our rate: the hold stays on the departed clock's truth (within what 5 s of
    // exchanges tell of its rate: the PeerClock tests allow 50 ppm, 0.25 ms over 5 s).
    assert.ok(Math.abs(held - 24) < 0.1);
    assert.ok(Math.abs(s.offsetAt(end + 5000)! - 24) < 0.3, `held ${s.offsetAt(end + 5000)} ms against 24`);
    // A reference 300 ppm fast leaves: the hold runs on at its rate (1.5 ms in 5 s), as every follower's does.
    const fast = simulate({ seconds: 20, offset: 20, ppm: 300, base: 0.1, jitter: 1, seed: 3 });
    const h = new SharedClock();
    h.ref = { kind: 'peer', peer: fast.clock, baseMs: 0 };
    const at = h.offsetAt(fast.end)!;
    h.ref = { kind: 'hold' };
    assert.ok(Math.abs(h.offsetAt(fast.end + 5000)! - at - 1.5) < 0.1, `ran on ${(h.offsetAt(fast.end + 5000)! - at).toFixed(3)} ms`);
    // The departed reference's channel is offered again (the mesh retries a closed link): its new
    // PeerClock has no estimate yet, and the shared clock runs on at the old one's rate, not frozen.
    h.ref = { kind: 'peer', peer: new PeerClock(), baseMs: 0 };
    assert.ok(Math.abs(h.offsetAt(fast.end + 8000)! - at - 2.4) < 0.1, `ran on ${(h.offsetAt(fast.end + 8000)! - at).toFixed(3)} ms with an empty clock to follow`);
    h.ref = { kind: 'self', baseMs: 7 };
    assert.equal(h.offsetAt(fast.end + 6000), 7, 'a reference of its own: its base');
  });
});

describe('decideClock', () => {
  const member = (clock?: ClockState, kind: MemberState['kind'] = 'participant'): MemberState => ({ v: 1, name: 'x', role: 'student', instrument: '', muted: false, format: 'stereo', kind, ...(clock ? { clock } : {}) });

  test('alone: nothing until mayStart, then a timeline of our own at base 0', () => {
    const roster = new Map([[50, member()]]);
    assert.equal(decideClock(50, roster, null, null, 1000, false), null);
    assert.deepEqual(decideClock(50, roster, null, null, 1000, true), { state: { ref: 50, origin: 1000, base: 0 }, ref: { kind: 'self', baseMs: 0 } });
  });

  test("a newcomer follows the room's reference, even with a lower id and an earlier clock", () => {
    const roster = new Map([
      [9, member()],
      [70, member({ ref: 70, origin: 5000, base: 2 })],
      [80, member({ ref: 70, origin: 5000, base: 0 })],
    ]);
    const d = decideClock(9, roster, null, null, 100, false)!;
    assert.deepEqual(d.ref, { kind: 'peer', peerId: '70', baseMs: 2 });
    assert.deepEqual(d.state, { ref: 70, origin: 5000, base: 0 });
    // And a newcomer that had already started its own (alone for a while): the older timeline wins.
    const mine: ClockState = { ref: 9, origin: 9000, base: 0 };
    roster.set(9, member(mine));
    assert.deepEqual(decideClock(9, roster, mine, null, 9500, true)!.ref, { kind: 'peer', peerId: '70', baseMs: 2 });
    // The reference itself keeps its own.
    assert.deepEqual(decideClock(70, roster, { ref: 70, origin: 5000, base: 2 }, null, 9500, true)!.ref, { kind: 'self', baseMs: 2 });
  });

  test('hand-over: the lowest follower has its worker fix the base, then takes over with it; the others hold until it says so', () => {
    const followed: ClockState = { ref: 70, origin: 5000, base: 0 };
    const roster = new Map([
      [80, member(followed)],
      [60, member(followed)],
    ]); // 70 left
    // First the worker fixes the base at that instant; we still publish the old timeline.
    assert.deepEqual(decideClock(60, roster, followed, null, 9000, true), { state: followed, ref: { kind: 'succeed' } });
    // A base fixed for another (older) timeline does not count.
    assert.deepEqual(decideClock(60, roster, followed, { origin: 4000, baseMs: 1 }, 9000, true)!.ref, { kind: 'succeed' });
    const took = decideClock(60, roster, followed, { origin: 5000, baseMs: 12.345 }, 9010, true)!;
    assert.deepEqual(took, { state: { ref: 60, origin: 5000, base: 12.345 }, ref: { kind: 'self', baseMs: 12.345 } });
    const waits = decideClock(80, roster, followed, null, 9000, true)!;
    assert.deepEqual(waits, { state: { ref: 60, origin: 5000, base: 0 }, ref: { kind: 'hold' } });
    // 80 decides again (each roster change, each second) before 60 has published anything new:
    // it keeps holding for 60, whose state still names the departed 70. (It took over itself
    // here: its followers were those naming 60, and 60 did not; a rehearsal saw both 60's and
    // 80's kind then reference themselves, and the room's shared clock split.)
    assert.deepEqual(decideClock(80, new Map([...roster, [80, member(waits.state)]]), waits.state, null, 9050, true), waits);
    // Once 60 publishes, 80 follows it with its base, and 60 stays the reference.
    roster.set(60, member(took.state));
    assert.deepEqual(decideClock(80, roster, waits.state, null, 9100, true)!.ref, { kind: 'peer', peerId: '60', baseMs: 12.345 });
    assert.deepEqual(decideClock(60, roster, took.state, { origin: 5000, baseMs: 12.345 }, 9100, true)!.ref, { kind: 'self', baseMs: 12.345 });
  });

  test('a remote (phone) is never a reference', () => {
    const roster = new Map([
      [5, member({ ref: 5, origin: 1, base: 0 }, 'remote')],
      [50, member()],
    ]);
    assert.deepEqual(decideClock(50, roster, null, null, 1000, true)!.ref, { kind: 'self', baseMs: 0 });
  });
});

describe('clock packets (wire v3)', () => {
  test('request and reply round-trip exactly', () => {
    const buf = new DataView(new ArrayBuffer(CLOCK.REPLY_SIZE));
    const h = newHeader();
    assert.equal(encodeClockRequest(buf, 7, 1795512345678.123), CLOCK.REQUEST_SIZE);
    assert.equal(decodeHeader(new DataView(buf.buffer, 0, CLOCK.REQUEST_SIZE), h), Reject.OK);
    assert.equal(h.control, ControlKind.CLOCK_REQUEST);
    assert.equal(h.controlId, 7);
    assert.equal(h.clockT1, 1795512345678.123);
    assert.equal(encodeClockReply(buf, 8, 1.5, 2.25, 3.125), CLOCK.REPLY_SIZE);
    assert.equal(decodeHeader(buf, h), Reject.OK);
    assert.deepEqual([h.control, h.controlId, h.clockT1, h.clockT2, h.clockT3], [ControlKind.CLOCK_REPLY, 8, 1.5, 2.25, 3.125]);
  });

  test('wrong length, an older version, or a non-finite time: bad-control', () => {
    const buf = new DataView(new ArrayBuffer(CLOCK.REPLY_SIZE));
    const h = newHeader();
    encodeClockRequest(buf, 1, 5);
    assert.equal(decodeHeader(buf, h), Reject.BAD_CONTROL, 'a request 32 bytes long');
    encodeClockReply(buf, 1, 5, 6, 7);
    assert.equal(decodeHeader(new DataView(buf.buffer, 0, CLOCK.REQUEST_SIZE), h), Reject.BAD_CONTROL, 'a reply 16 bytes long');
    buf.setUint8(0, (0xa << 4) | VERSION_PCM24);
    assert.equal(decodeHeader(buf, h), Reject.BAD_CONTROL, 'a clock kind with a v2 header (kinds 1–4 only)');
    encodeClockReply(buf, 1, 5, NaN, 7);
    assert.equal(decodeHeader(buf, h), Reject.BAD_CONTROL);
  });
});
