// The stats tell the truth, and the resilience features engage, between two real browsers: a
// sender told (by a test option in its URL) to drop every 20th frame, to delay or jitter its
// packets, or to run its clock 1000 ppm fast; the receiver's figures must show exactly that.

import { expect, test, type Page } from '@playwright/test';
import { joinRoom, setRedundancy } from '../support/browsers.ts';
import { delta, onlyPeer, stats, waitForPeers } from '../support/stats.ts';
import { roomSuite } from '../support/suite.ts';

// The test build: only it reads the test options in the URL.
const suite = roomSuite('truth', { build: 'test' });

/** Alice joins with `aliceQuery` (test options), Bob plainly; both wait for full-rate audio. */
async function duo(room: string, aliceQuery: string): Promise<{ a: Page; b: Page }> {
  const a = await suite.launch({ wav: suite.wav.a });
  const b = await suite.launch({ wav: suite.wav.b });
  await joinRoom(a.page, suite.server.url, room, 'Alice', { query: aliceQuery });
  await joinRoom(b.page, suite.server.url, room, 'Bob');
  try {
    await waitForPeers(a.page, 1);
    await waitForPeers(b.page, 1);
  } catch (err) {
    console.log('stats at the timeout:', JSON.stringify([await stats(a.page), await stats(b.page)]));
    throw err;
  }
  await b.page.waitForTimeout(2000);
  return { a: a.page, b: b.page };
}

/**
 * Test build: the points of the drift shown (workers/shown-drift.ts) as Bob's network worker holds
 * them: A, the sender's samples ahead of its capture stamps, and C, our output clock ahead of the
 * wall clock; per second, ms from each series' first point (for reading a wrong figure in a log).
 */
async function driftSeries(page: Page): Promise<string> {
  const w = page.workers().find((x) => x.url().includes('net'));
  if (!w) return 'no network worker';
  return w.evaluate(`(() => {
    const net = self.__tuttiWorker;
    const dump = (line) => {
      const out = [];
      for (let k = 0; k < line.length; k++) {
        const i = (line.next - line.length + k + 2 * line.capacity) % line.capacity;
        out.push(line.v[i]);
      }
      return out.map((v) => (v - out[0]).toFixed(2)).join(' ');
    };
    const peer = [...net.peers.values()][0];
    return 'A: ' + (peer ? dump(peer.drift.seconds.line) : 'no peer') + ' | C: ' + dump(net.output.line) + ' (C seconds left out as misdated: ' + net.output.misdatedSeconds + ')';
  })()`);
}

test('a sender dropping every 20th frame: the receiver reports 5 % lost and conceals it; with redundancy it recovers them all', async () => {
  const { a, b } = await duo('drop', 'dropEvery=20');
  await setRedundancy(a, 'Off');
  await b.waitForTimeout(1500);
  let s0 = await onlyPeer(b);
  await b.waitForTimeout(8000);
  let s1 = await onlyPeer(b);
  let d = delta(s0, s1);
  console.log(`redundancy off: expected ${d.expected}, lost ${d.lost}, concealed ${d.concealed}, late ${d.late}, lost % ${s1.percent.lost}`);
  expect(d.expected).toBeGreaterThan(2500);
  expect(d.lost / d.expected).toBeGreaterThan(0.04);
  expect(d.lost / d.expected).toBeLessThan(0.06);
  expect(d.recovered).toBe(0);
  expect(d.concealed, 'every lost frame is concealed').toBeGreaterThanOrEqual(d.lost);

  await setRedundancy(a, '1 frame');
  await b.waitForTimeout(1500);
  s0 = await onlyPeer(b);
  const a0 = await onlyPeer(a);
  await b.waitForTimeout(8000);
  s1 = await onlyPeer(b);
  const a1 = await onlyPeer(a);
  d = delta(s0, s1);
  // A frame whose next packet was not sent either is lost for good: the sender drops a packet
  // itself when its channel's backlog is too old to play (a stall of this 2-core machine; a
  // clean-clone run lost one frame so). It counts those, and they are not redundancy's failure.
  // Its stats and the receiver's are both 1 Hz and a second apart at most; such a drop is rare
  // enough that the window's ends do not matter.
  const senderDropped = a1.sendDropped - a0.sendDropped;
  console.log(`redundancy 1: expected ${d.expected}, recovered ${d.recovered}, lost ${d.lost}, concealed ${d.concealed}; the sender itself dropped ${senderDropped}`);
  expect(d.recovered / d.expected).toBeGreaterThan(0.04);
  expect(d.recovered / d.expected).toBeLessThan(0.06);
  expect(d.lost, 'each dropped frame travels again in the next packet (unless the sender could not send that one either)').toBeLessThanOrEqual(senderDropped);
});

test('a sender with jittered packets: the receiver sees its IFDV rise and late frames at a tiny manual depth; the adaptive depth grows past the jitter', async () => {
  const { a, b } = await duo('jitter', 'jitterMs=25');
  // Bob receives the jittered stream; Alice receives Bob's clean one: same run, side by side.
  const jittered = await onlyPeer(b);
  const clean = await onlyPeer(a);
  console.log(`IFDV p95: jittered ${jittered.ifdvMs?.p95} ms, clean ${clean.ifdvMs?.p95} ms`);
  // Measured 9.3–10.9 ms for U[0, 25) ms per packet (the gaps between consecutive arrivals, which
  // the reordering that much jitter causes keeps well below the 25 ms spread) against 1–3 ms clean.
  expect(jittered.ifdvMs!.p95).toBeGreaterThan(clean.ifdvMs!.p95 + 5);
  expect(jittered.ifdvMs!.p95).toBeGreaterThan(6);

  await b.getByRole('checkbox', { name: 'Automatic jitter buffer' }).uncheck();
  await b.getByRole('slider', { name: /Jitter buffer/ }).fill('1');
  await b.waitForTimeout(3000);
  const s0 = await onlyPeer(b);
  await b.waitForTimeout(5000);
  const s1 = await onlyPeer(b);
  const d = delta(s0, s1);
  console.log(`depth 1 with 25 ms jitter: late ${d.late} of ${d.expected} (${((100 * d.late) / d.expected).toFixed(2)} %), underruns ${d.underruns}, trimmed ${s1.trimmed - s0.trimmed}; fill ${JSON.stringify(s1.fill)}`);
  expect(d.late + d.underruns, 'a 2.7 ms buffer cannot absorb 25 ms of jitter').toBeGreaterThan(0);
  expect(s1.percent.late).toBeGreaterThan(0);

  await b.getByRole('checkbox', { name: 'Automatic jitter buffer' }).check();
  await expect.poll(async () => (await onlyPeer(b)).fill.target, { timeout: 20_000 }).toBeGreaterThanOrEqual(5);
});

test('peer loopback: a 40 ms delay injected at the sender shows up in the measured round trip', async () => {
  const { a } = await duo('loop', 'delayMs=40');
  const peerId = (await onlyPeer(a)).peerId;
  await a.evaluate((id) => {
    const app = document.querySelector('tutti-app') as unknown as { session: { engine: { net: { setLoopback(id: string, on: boolean): void } } } };
    app.session.engine.net.setLoopback(id, true);
  }, peerId);
  await expect.poll(async () => (await onlyPeer(a)).loopbackRttMs, { timeout: 15_000 }).not.toBeNull();
  await a.waitForTimeout(3000);
  const p = await onlyPeer(a);
  console.log(`loopback round trip ${p.loopbackRttMs} ms with 40 ms injected one way; channel ping ${p.rttMs} ms`);
  // Tolerance: the injected 40 ms plus the real path (worker wake-ups, two DataChannel hops,
  // Chromium's timers) — measured here at 2–8 ms; allow 25 ms on a loaded CI machine.
  expect(p.loopbackRttMs!).toBeGreaterThanOrEqual(40);
  expect(p.loopbackRttMs!).toBeLessThan(40 + 25);
});

test('a sender whose clock runs 1000 ppm fast: the receiver holds its depth (drift compensation)', async () => {
  // Uncompensated, +1000 ppm piles up 0.375 quanta per second: 11 quanta in the 30 s below.
  const { a, b } = await duo('drift', 'captureRatio=1.001');
  await b.getByRole('checkbox', { name: 'Automatic jitter buffer' }).uncheck();
  await b.getByRole('slider', { name: /Jitter buffer/ }).fill('8');
  await b.waitForTimeout(8_000);
  // `held` is the buffer level the playout rate holds at the target (the median low point of the
  // last ~0.5 s); `avg`, the mean low point, also moves with how bursty the arrivals are (after a
  // stall of this 2-core machine it sat 1.2 quanta above for 25 s while `held` stayed on target).
  // The rate holds it at the target less `relief` (arrivals later than their earliest of ~90 s,
  // up to a dip that recurs: workers/depth-controller.ts), so `held + relief` is what must stay at 8.
  //
  // A window is judged only if Alice's stream had all that was due: her microphone track lost
  // nothing (StatsMessage.captureLostFrames, seen by her worker within ~1.5 s) and her sender
  // dropped nothing. What her capture loses never reaches Bob, and his level falls by it for good
  // while the rate (at most 0.5 %) refills it: in a CI run under 8.8 % host steal, held + relief
  // sat at 1–5 quanta for the last 15 s with the rate pinned at 0.995, 40 underruns (headless
  // Chromium's fake microphone runs on a timer, and skips what a stall of the host made it miss:
  // docs/TESTING.md). Up to three windows.
  const captureLost = async () => (await stats(a))?.captureLostFrames ?? 0;
  let judged: { fills: number[]; d: ReturnType<typeof delta> } | null = null;
  for (let w = 1; w <= 3 && !judged; w++) {
    const lost0 = await captureLost();
    const dropped0 = (await onlyPeer(a)).sendDropped;
    const s0 = await onlyPeer(b);
    const fills: number[] = [];
    const means: number[] = [];
    const perSecond: string[] = [];
    let prev = s0;
    for (let i = 0; i < 30; i++) {
      await b.waitForTimeout(1000);
      const now = await onlyPeer(b);
      const f = now.fill;
      fills.push(Math.round((f.held + f.relief) * 100) / 100);
      means.push(f.avg);
      const d = delta(prev, now);
      perSecond.push(`${f.held}+${f.relief}/${now.rate.toFixed(5)}/${d.underruns}u${now.trimmed - prev.trimmed}t`);
      prev = now;
    }
    const s1 = await onlyPeer(b);
    const d = delta(s0, s1);
    await b.waitForTimeout(1500);
    const lost = (await captureLost()) - lost0;
    const dropped = (await onlyPeer(a)).sendDropped - dropped0;
    console.log(`window ${w}: +1000 ppm sender, per second held/rate/underruns,trims: ${perSecond.join(' ')}`);
    console.log(`window ${w}: +1000 ppm sender, depth 8: held fill per second ${fills.join(' ')}; mean low point per second ${means.join(' ')}; drift estimate ${s1.driftPpm} ppm, rate ${s1.rate}; resyncs ${d.resyncs}, underruns ${d.underruns}, late ${d.late}, lost ${d.lost}; Alice's track lost ${lost} frames, her sender dropped ${dropped}`);
    if (lost === 0 && dropped === 0) judged = { fills, d };
    else console.log(`window ${w}: not judged: Alice's stream was short of what was due`);
  }
  expect(judged, "a 30 s window in which Alice's microphone track lost nothing and her sender dropped nothing (three tried)").not.toBeNull();
  const { fills, d } = judged!;
  // Medians, not means: a stall of this shared 2-core machine can throw one or two seconds' fill
  // far off (the buffer then drains back by rate), and that is not what this test is about.
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  expect(Math.abs(median(fills) - 8), 'the buffer holds its depth').toBeLessThanOrEqual(1);
  expect(Math.abs(median(fills.slice(-10)) - median(fills.slice(0, 10))), 'no trend (uncompensated: +11 quanta)').toBeLessThanOrEqual(2);
  expect(d.resyncs).toBe(0);
  expect(d.late).toBe(0);
  // The drift shown (workers/shown-drift.ts): this sender's samples run 1000 ppm fast against its
  // capture stamps; our output clock reaches the worker from the page (getOutputTimestamp). The
  // first figure comes 90 s after the stream starts. Headless Chromium's fake capture and output
  // devices run on timers with clocks of their own, a few hundred ppm off under load (the figure
  // read 933 and 1168 ppm in two runs here, the playout rate 1.001168 in the second), so this
  // checks the path end to end; tests/unit/shown-drift.test.ts holds the estimate to ±30 ppm.
  await expect.poll(async () => (await onlyPeer(b)).driftPpm, { timeout: 75_000, intervals: [2000] }).not.toBeNull();
  const end = await onlyPeer(b);
  console.log(`+1000 ppm sender: drift shown ${end.driftPpm} ppm over ${end.driftSeconds} s; playout rate ${end.rate}`);
  console.log(`the two series the figure is fitted on, per second (ms, each from its first point): ${await driftSeries(b)}`);
  expect(Math.abs(end.driftPpm! - 1000), `drift shown ${end.driftPpm} ppm for a sender 1000 ppm fast`).toBeLessThanOrEqual(300);
});

test('one-way delay: a 40 ms delay injected at the sender shows in it, and its output part is our device clock\'s', async () => {
  const { b } = await duo('oneway', 'delayMs=40');
  await expect.poll(async () => (await onlyPeer(b)).oneWayMs, { timeout: 30_000, message: 'the figure shows once our output has played OUTPUT_CLOCK_SETTLE_S (12 s)' }).not.toBeNull();
  await b.waitForTimeout(3000);
  // Five seconds' figures, and their medians: the strip shows the median of the last five seconds
  // (src/ui/quality.ts recentLatency), as one second's p50 moves with a stall of this machine.
  const seconds: { oneWay: number; added: number }[] = [];
  for (let i = 0; i < 5; i++) {
    await b.waitForTimeout(1000);
    const s = await onlyPeer(b);
    if (s.oneWayMs && s.latencyMs) seconds.push({ oneWay: s.oneWayMs.p50, added: s.latencyMs.p50 });
  }
  expect(seconds.length, 'a one-way and a pipeline figure in each of five seconds').toBe(5);
  const mid = (xs: number[]) => [...xs].sort((x, y) => x - y)[2]!;
  const p = { oneWayMs: { p50: mid(seconds.map((x) => x.oneWay)) }, latencyMs: { p50: mid(seconds.map((x) => x.added)) } };
  const device = await b.evaluate(() => {
    const app = document.querySelector('tutti-app') as unknown as { session: { engine: { deviceLatency(): { outputLatencyS: number; baseLatencyS: number } } } };
    const d = app.session.engine.deviceLatency();
    return (d.outputLatencyS + d.baseLatencyS) * 1000;
  });
  const outputPart = p.oneWayMs!.p50 - p.latencyMs!.p50;
  console.log(`per second (one-way/added): ${seconds.map((x) => `${x.oneWay}/${x.added}`).join(' ')}`);
  console.log(`one-way ${JSON.stringify(p.oneWayMs)} ms, added ${JSON.stringify(p.latencyMs)} ms with 40 ms injected; playout → speaker ${outputPart.toFixed(1)} ms, the context reports ${device.toFixed(1)} ms`);
  expect(p.latencyMs!.p50).toBeGreaterThanOrEqual(40);
  expect(p.oneWayMs!.p50).toBeGreaterThan(p.latencyMs!.p50);
  // The speaker is after our playout by what the output device holds: the same device the
  // AudioContext reports on, read at other moments (its renders come in bursts), so within a
  // device callback (10.7 ms) of its figure.
  expect(Math.abs(outputPart - device)).toBeLessThan(11);
  // The strip shows the measured figure of the latest stats.
  const strip = b.locator('[data-testid="one-way"]').first();
  await expect(strip).toHaveAttribute('title', /measured by the device's clock/);
});

test('the sender\'s microphone start reaches the listener\'s playout: Bob\'s depth controller for Alice has the moment her microphone opened', async () => {
  // What a listener needs to take a falling lag as the top of a delivery ramp (workers/
  // depth-controller.ts, "Start-up"): Alice's engine stamps getUserMedia's answer, her member
  // state publishes it (micSince), Bob's mesh hands it to his network worker with her channel.
  const { a, b } = await duo('mic-since', '');
  const opened = await a.evaluate(() => (document.querySelector('tutti-app') as unknown as { session: { engine: { micSinceMs: number } } }).session.engine.micSinceMs);
  const w = b.workers().find((x) => x.url().includes('net'));
  expect(w, 'Bob\'s network worker').toBeTruthy();
  const held = await w!.evaluate(() => {
    const net = (self as unknown as { __tuttiWorker: { peers: Map<string, { controller: { micSinceMs: number } }> } }).__tuttiWorker;
    return [...net.peers.values()].map((p) => p.controller.micSinceMs);
  });
  console.log(`Alice's microphone opened at ${opened}; Bob's controller holds ${JSON.stringify(held)} (${(Date.now() - opened) / 1000} s ago)`);
  expect(Number.isFinite(opened), 'Alice\'s engine stamped her microphone\'s start').toBe(true);
  expect(Date.now() - opened, 'within this test').toBeLessThan(60_000);
  expect(held).toEqual([opened]);
});
