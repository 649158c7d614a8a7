// Real network faults between real browsers (separate Chromium processes), built from parts these
// machines have (kernel netem is not available):
//  (a) random loss at the IP layer: Bob's Chromium runs in its own network namespace, joined to
//      Alice's by a veth pair; an nftables rule in it drops 5 % of the UDP datagrams leaving it.
//  (b) delay, jitter, reordering and loss through a real TURN server: both browsers relay all media
//      through Debian's coturn (iceTransportPolicy 'relay'), via a UDP impairment relay of the
//      test's own that delays client → server datagrams by 20 ± 10 ms, reorders 1 % and drops 1 %.
// Each one: the stream keeps flowing, and the receiver's stats report the loss actually applied
// (counted by nftables or by the relay) within a stated tolerance. On the impaired TURN path SCTP's
// congestion control also makes the sender drop frames; those are reported by the sender and the
// link is stepped down (docs/TESTING.md). Without their tools (root, nftables, iproute2, coturn)
// each skips with the reason, except in CI, where it fails with it (tests/support/require-tools.ts).

import { expect, test, type Page } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { PeerStats } from '../../src/shared/worker-protocol.ts';
import { joinRoom, launchPeer, setRedundancy, type PeerBrowser } from '../support/browsers.ts';
import { installLeakCounters, selectedPairs } from '../support/leaks.ts';
import { createNetns, netnsUnavailable, type Netns } from '../support/netns.ts';
import { startServer, type RunningServer } from '../support/server.ts';
import { FRAMES_PER_SECOND, delta as counterDelta, onlyPeer, stats } from '../support/stats.ts';
import { TEST_TMP } from '../support/suite.ts';
import { requireTools } from '../support/require-tools.ts';
import { startTurn, turnUnavailable, type TurnServer } from '../support/turn.ts';
import { UdpImpairRelayProcess } from '../support/udp-impair-process.ts';
import { writeToneWav } from '../support/wav.ts';

const LOSS_PERCENT = Number(process.env['TUTTI_NET_LOSS'] ?? 5);
const WINDOW_MS = 10_000;
const DELAY_MS = Number(process.env['TUTTI_NET_DELAY'] ?? 20);
const JITTER_MS = Number(process.env['TUTTI_NET_JITTER'] ?? 10);
const REORDER_PERCENT = Number(process.env['TUTTI_NET_REORDER'] ?? 1);
/**
 * Drop share on the TURN path. Not 5 %: SCTP's congestion control (it applies to unreliable
 * channels too) cannot carry 375 packets/s over a 55+ ms round trip at 5 % loss even as a mono
 * mixdown (measured at 1 %: 5–10 % of the frames dropped at the sender). TUTTI_TURN_LOSS overrides.
 */
const TURN_LOSS_PERCENT = Number(process.env['TUTTI_TURN_LOSS'] ?? 1);
const tmp = TEST_TMP;

async function waitForStream(page: Page, who: string): Promise<void> {
  await expect
    .poll(async () => (await stats(page))?.peers[0]?.framesPerSecond ?? 0, { message: `${who} receives at full rate`, timeout: 45_000, intervals: [250] })
    .toBeGreaterThan(FRAMES_PER_SECOND * 0.8);
}

/** Counter deltas of one receiver over a window, and its loss as a share of the playout slots. */
function delta(p0: PeerStats, p1: PeerStats) {
  const { expected: _expected, underruns: _underruns, ...d } = counterDelta(p0, p1);
  return { ...d, lostPercent: (100 * d.lost) / (d.played + d.missed) };
}

function tones(): { a: string; b: string } {
  mkdirSync(tmp, { recursive: true });
  return {
    a: writeToneWav(join(tmp, 'net-a.wav'), { leftHz: 440, rightHz: 660, seconds: 5 }),
    b: writeToneWav(join(tmp, 'net-b.wav'), { leftHz: 1000, rightHz: 1250, seconds: 5 }),
  };
}

test('IP-layer loss: 5 % of UDP dropped by nftables in a network namespace; the stream continues and stats report the loss', async () => {
  requireTools(test, 'network namespaces with nftables', netnsUnavailable());
  const wav = tones();
  let ns: Netns | null = null;
  let server: RunningServer | null = null;
  const peers: PeerBrowser[] = [];
  try {
    ns = createNetns();
    ns.setUdpLoss(0);
    // The server listens on the veth address, reachable from both namespaces. That origin is plain
    // http on a non-loopback address, so Chromium is told to treat it as secure (cross-origin
    // isolation, hence SharedArrayBuffer, needs a secure context).
    server = await startServer({ host: ns.hostIp });
    const secure = `--unsafely-treat-insecure-origin-as-secure=${server.url}`;
    const a = await launchPeer({ wav: wav.a, extraArgs: [secure] });
    const b = await launchPeer({ wav: wav.b, extraArgs: [secure], executablePath: ns.chromium });
    peers.push(a, b);
    for (const p of peers) await installLeakCounters(p.page);
    await joinRoom(a.page, server.url, 'netns', 'Alice', { query: '' });
    await joinRoom(b.page, server.url, 'netns', 'Bob', { query: '' });
    // This test checks the loss the stats report against the loss applied, so Bob sends without
    // redundancy (with it, lost frames are recovered: truth.spec.ts covers that).
    await setRedundancy(b.page, 'Off');
    await waitForStream(a.page, 'Alice');
    await waitForStream(b.page, 'Bob');
    // Bob's media leaves through his namespace's veth end: the nftables rule sees every datagram.
    const [pairB] = await selectedPairs(b.page);
    console.log(`Bob's selected pair: ${JSON.stringify(pairB)}`);
    expect(pairB?.localAddress?.split(':')[0]).toBe(ns.nsIp);

    for (const percent of [LOSS_PERCENT, 4 * LOSS_PERCENT]) {
      ns.setUdpLoss(percent);
      await a.page.waitForTimeout(1000); // frames in flight under the old rule drain
      const c0 = ns.counters();
      const s0 = await onlyPeer(a.page);
      const sent0 = (await onlyPeer(b.page)).sendDropped;
      await a.page.waitForTimeout(WINDOW_MS);
      const s1 = await onlyPeer(a.page);
      const c1 = ns.counters();
      const senderDropped = (await onlyPeer(b.page)).sendDropped - sent0;
      const dropped = c1.dropped - c0.dropped;
      const total = dropped + c1.passed - c0.passed;
      const applied = dropped / total;
      const d = delta(s0, s1);
      // Measured: Chromium's SCTP retransmits a lost chunk once even on a maxRetransmits: 0
      // channel, and on this sub-millisecond link the copy arrives in time. A frame is therefore
      // lost only when both its datagrams are dropped: expected frame loss = applied².
      const model = 100 * applied * applied;
      const tol = 0.3 + 300 * Math.sqrt((model / 100) * (1 - model / 100) / (d.played + d.missed));
      console.log(
        `nft ${percent} %: ${dropped} of ${total} UDP datagrams dropped (${(100 * applied).toFixed(2)} %); Alice from Bob: ${JSON.stringify(d)}; ` +
          `lost ${d.lostPercent.toFixed(2)} % (model applied² = ${model.toFixed(2)} % ± ${tol.toFixed(2)}); Bob's sender dropped ${senderDropped} (congested channel)`,
      );
      expect(100 * applied, 'the nftables rule dropped about the share it was set to').toBeGreaterThan(percent * 0.7);
      expect(100 * applied).toBeLessThan(percent * 1.3);
      expect(Math.abs(d.lostPercent - model), `Alice's lost % ${d.lostPercent.toFixed(2)} vs applied² ${model.toFixed(2)} % (applied ${(100 * applied).toFixed(2)} %)`).toBeLessThanOrEqual(tol);
      // The stream keeps flowing: nearly every frame arrives, no resync, nothing rejected.
      expect(d.received + d.late).toBeGreaterThan(FRAMES_PER_SECOND * (WINDOW_MS / 1000) * 0.85);
      if (percent === LOSS_PERCENT) expect(d.resyncs, `resyncs at ${percent} % loss`).toBe(0);
      expect(d.rejected).toBe(0);
    }
    // Redundancy engages on the same lossy link: with one copy per packet (the room setting), the
    // frames whose datagram and SCTP retransmission were both dropped (applied², the losses above)
    // come back from the next packet's copy. (Measured: recovered ≈ applied² of the frames, lost 0.)
    await setRedundancy(b.page, '1 frame');
    ns.setUdpLoss(LOSS_PERCENT);
    await a.page.waitForTimeout(2000);
    const c0 = ns.counters();
    const s0 = await onlyPeer(a.page);
    const b0 = await onlyPeer(b.page);
    await a.page.waitForTimeout(WINDOW_MS);
    const s1 = await onlyPeer(a.page);
    const c1 = ns.counters();
    const applied = (c1.dropped - c0.dropped) / (c1.dropped - c0.dropped + c1.passed - c0.passed);
    const d = delta(s0, s1);
    const recoveredShare = d.recovered / (d.played + d.missed);
    const bob = await onlyPeer(b.page);
    console.log(`Bob → Alice while measured: sendDropped +${bob.sendDropped - b0.sendDropped} (${bob.sendDropped} in all), copies ${b0.sendRedundancy} → ${bob.sendRedundancy}, mono ${bob.sendMono}`);
    console.log(`nft ${LOSS_PERCENT} % with redundancy 1: applied ${(100 * applied).toFixed(2)} %; Alice from Bob: ${JSON.stringify(d)}; recovered ${(100 * recoveredShare).toFixed(2)} % of the frames`);
    expect(d.recovered, 'frames restored from the next packet\'s copy').toBeGreaterThan(0);
    // Frames Bob's sender never sent are not the network's: now and then (1 run in 3 here, 7 frames
    // in 10 s) the lossy link stalls Chromium's SCTP association for ~60 ms, the channel's backlog
    // goes stale and the sender drops a run of frames, counted in its sendDropped. No copy covers
    // a run; that cost of SCTP under loss is the roadmap's (a datagram transport). The copies'
    // claim is about the datagrams the network dropped, and holds as tight as before.
    const senderDropped = bob.sendDropped - b0.sendDropped;
    expect(d.lost - senderDropped, `with a copy in every packet a frame is lost only when three datagrams are (lost ${d.lost}, of them ${senderDropped} never sent)`).toBeLessThanOrEqual(Math.max(3, 3 * (d.played + d.missed) * applied ** 3));
    expect((await onlyPeer(b.page)).framesPerSecond, "Bob still receives Alice's stream").toBeGreaterThan(FRAMES_PER_SECOND * 0.8);
    expect((await onlyPeer(a.page)).channelState).toBe('open');
  } finally {
    await Promise.all(peers.map((p) => p.close()));
    await server?.close();
    ns?.close();
  }
});

interface TurnImpairment {
  delayMs: number;
  jitterMs: number;
  reorderPercent: number;
  dropPercent: number;
}

test('TURN relay, no impairment: relay-only ICE through coturn carries the stream at full rate', async () => {
  await turnScenario({ delayMs: 0, jitterMs: 0, reorderPercent: 0, dropPercent: 0 });
});

test('TURN relay with delay 20 ± 10 ms, reordering and loss: the stream continues, stats report the loss', async () => {
  await turnScenario({ delayMs: DELAY_MS, jitterMs: JITTER_MS, reorderPercent: REORDER_PERCENT, dropPercent: TURN_LOSS_PERCENT });
});

async function turnScenario(imp: TurnImpairment): Promise<void> {
  requireTools(test, 'coturn (TURN relay)', turnUnavailable());
  const wav = tones();
  let turn: TurnServer | null = null;
  let relay: UdpImpairRelayProcess | null = null;
  let server: RunningServer | null = null;
  const peers: PeerBrowser[] = [];
  try {
    turn = await startTurn();
    relay = await new UdpImpairRelayProcess(turn.port, { delayMs: imp.delayMs, jitterMs: imp.jitterMs, dropPercent: 0, reorderPercent: imp.reorderPercent, seed: 0x7077 }).start();
    server = await startServer();
    const iceServers: RTCIceServer[] = [{ urls: `turn:127.0.0.1:${relay.port}?transport=udp`, username: turn.user, credential: turn.password }];
    // The app's own settings: TURN servers and relay-only ICE, set before any page script runs.
    const settings = `localStorage.setItem('tutti.iceServers', ${JSON.stringify(JSON.stringify(iceServers))}); localStorage.setItem('tutti.iceTransportPolicy', 'relay');`;
    const a = await launchPeer({ wav: wav.a });
    const b = await launchPeer({ wav: wav.b });
    peers.push(a, b);
    for (const p of peers) {
      await p.page.addInitScript({ content: settings });
      await installLeakCounters(p.page);
    }
    await joinRoom(a.page, server.url, 'turn', 'Alice', { query: '' });
    await joinRoom(b.page, server.url, 'turn', 'Bob', { query: '' });
    await waitForStream(a.page, 'Alice').catch(async (e: unknown) => {
      throw new Error(`${String(e)}\nrelay ${JSON.stringify(await relay?.snapshot())}\nturnserver log:\n${turn?.log().slice(-3000)}`);
    });
    await waitForStream(b.page, 'Bob');
    for (const [who, p] of [['Alice', a.page], ['Bob', b.page]] as const) {
      const all = await selectedPairs(p);
      console.log(`${who}'s selected pairs: ${JSON.stringify(all)}`);
      // Two connections per partner: y-webrtc's room link (a few messages) and the audio link
      // (375 packets/s); the audio one is the one carrying the most packets.
      expect(all.length).toBe(2);
      const pairs = [...all].sort((x, y) => (y.packetsSent ?? 0) - (x.packetsSent ?? 0));
      expect(pairs[0]!.local, `${who}: local candidate of the audio link's selected pair`).toBe('relay');
      expect(pairs[0]!.remote, `${who}: remote candidate of the audio link's selected pair`).toBe('relay');
    }

    relay.setImpairment({ dropPercent: imp.dropPercent });
    // On the impaired path each sender's governor needs a few seconds to step its link down.
    await a.page.waitForTimeout(imp.dropPercent > 0 ? 8000 : 1000);
    const r0 = await relay.snapshot();
    const s0 = [await onlyPeer(a.page), await onlyPeer(b.page)];
    // The audio link's pair: the one carrying the most packets (above).
    const audioPair = async (page: typeof a.page) => [...(await selectedPairs(page))].sort((x, y) => (y.packetsSent ?? 0) - (x.packetsSent ?? 0))[0];
    // Both at once: each direction's sent and received counters come from two processes.
    const p0 = await Promise.all([audioPair(a.page), audioPair(b.page)]);
    // On the lossy path the window is 30 s: below, each receiver's misses are matched against its
    // sender's congestion drops, both read from 1 Hz stats posted by two browser processes, so each
    // end of the window can be up to a second apart between the two; the senders drop in bursts
    // (SCTP's window collapsing), and one burst inside that second moved a 10 s window's missed %
    // by 1.1 (41 frames) in a clean-clone run. Over 30 s the same second weighs a third as much.
    const windowMs = imp.dropPercent > 0 ? 3 * WINDOW_MS : WINDOW_MS;
    // Each sender's congestion drops, read once a second: congestion drops every second, while a
    // stall of this 2-core machine (both browsers, coturn and the relay) drops one burst.
    const dropsPerSecond: [number[], number[]] = [[], []];
    let last = s0.map((s) => s.sendDropped);
    for (let t = 0; t < windowMs; t += 1000) {
      await a.page.waitForTimeout(1000);
      const now = [(await onlyPeer(a.page)).sendDropped, (await onlyPeer(b.page)).sendDropped];
      for (let i = 0; i < 2; i++) dropsPerSecond[i]!.push(now[i]! - last[i]!);
      last = now;
    }
    const s1 = [await onlyPeer(a.page), await onlyPeer(b.page)];
    const p1 = await Promise.all([audioPair(a.page), audioPair(b.page)]);
    const r1 = await relay.snapshot();
    for (let i = 0; i < 2; i++) {
      const d = (k: 'packetsSent' | 'packetsReceived' | 'messagesSent' | 'messagesReceived') => (p1[i]?.[k] ?? 0) - (p0[i]?.[k] ?? 0);
      console.log(`${i ? 'Bob' : 'Alice'}'s transport over the window: packets sent ${d('packetsSent')}, received ${d('packetsReceived')}; data-channel messages sent ${d('messagesSent')}, received ${d('messagesReceived')}`);
    }
    const up = r1.up - r0.up;
    const appliedPercent = (100 * (r1.dropped - r0.dropped)) / up;
    console.log(`relay: ${r1.dropped - r0.dropped} of ${up} client datagrams dropped (${appliedPercent.toFixed(2)} %), ${r1.reordered - r0.reordered} reordered, ${r1.clients} TURN client sockets`);
    for (let i = 0; i < 2; i++) {
      const who = i ? 'Bob' : 'Alice';
      const d = delta(s0[i]!, s1[i]!);
      // The playout slots that missed their frame are the frames the relay dropped plus those the
      // sender itself dropped because SCTP's congestion control held its queue over the limit
      // (reported by the sender as sendDropped).
      const sender = s1[1 - i]!;
      const senderDropped = sender.sendDropped - s0[1 - i]!.sendDropped;
      // Frames that came after their slot (late: this busy machine's scheduling, not the path's
      // loss) are missed too, but the app counts them late, not lost: what is compared with the
      // path's loss is the lost figure, missed − late.
      const missedPercent = (100 * (d.missed - d.late - senderDropped)) / (d.played + d.missed);
      // What the path lost, in the unit the receiver counts: data-channel messages its sender's
      // transport sent over the window that its own did not receive (the browsers' SCTP
      // counters). Not the relay's datagram loss: a congested sender's SCTP bundles several queued
      // messages into one datagram, so one dropped datagram can take two or three frames (a
      // clean-clone run: the relay dropped 0.96 % of datagrams, the transports lost 1.6 % of
      // messages, and the receiver missed 1.79 % beyond its sender's own drops).
      // Where the relay dropped nothing, nothing was lost in transit (the relay is the only lossy
      // hop; loopback UDP drops nothing at these rates): the counters of two processes, read at
      // once, still disagreed by 40-48 messages of ~4200 (1.1 %) on the clean path here, and by
      // −19 in a clean-clone run, while every frame arrived: the stats lag the traffic by a
      // different amount at each read.
      const sent = (p1[1 - i]?.messagesSent ?? 0) - (p0[1 - i]?.messagesSent ?? 0);
      const got = (p1[i]?.messagesReceived ?? 0) - (p0[i]?.messagesReceived ?? 0);
      const transitPercent = r1.dropped === r0.dropped ? 0 : (100 * (sent - got)) / (d.played + d.missed);
      const loss = Math.max(appliedPercent, transitPercent) / 100;
      const tol = 0.5 + 300 * Math.sqrt((loss * (1 - loss)) / (d.played + d.missed));
      console.log(
        `${who} (through TURN): ${JSON.stringify(d)}, missed ${missedPercent.toFixed(2)} % (lost in transit ${transitPercent.toFixed(2)} % ± ${tol.toFixed(2)}; the relay dropped ${appliedPercent.toFixed(2)} % of datagrams), ` +
          `lost ${d.lostPercent.toFixed(2)} %, latency ${JSON.stringify(s1[i]!.latencyMs)}, depth ${s1[i]!.depth}, rtt ${s1[i]!.rttMs} ms; ` +
          `its sender dropped ${senderDropped} (queue over the limit) and sends ${sender.sendMono ? 'mono' : 'its channels'} with ${sender.sendRedundancy} redundant copies`,
      );
      // Unimpaired, everything arrives; impaired, the sender's congestion drops are the price of
      // SCTP on this path (docs/TESTING.md): measured 8–10 % with a mono mixdown.
      const arriving = imp.dropPercent > 0 ? 0.8 : 0.95;
      expect(d.received + d.late, `${who}: frames still arriving`).toBeGreaterThan(FRAMES_PER_SECOND * (windowMs / 1000) * arriving);
      expect(d.resyncs, `${who}: no buffer resets`).toBe(0);
      if (d.missed > 0) expect(d.concealed, `${who}: missed frames are concealed`).toBeGreaterThan(0);
      if (imp.dropPercent > 0) expect(sender.sendRedundancy, `${who}'s sender stepped the congested link down`).toBe(0);
      // Clean: no congestion. A congested link drops every second; a stall of the busy test
      // machine drops one burst, once (a clean-clone run: 16 and 21 frames at both senders at
      // once, relay and coturn clean; 0 in the 5 runs repeated after it and in the 10 before). So
      // at most one burst: drops in at most two adjacent seconds of the 1 Hz stats (one burst can
      // straddle two), and nothing beyond 0.5 % outside them.
      else {
        const seconds = dropsPerSecond[1 - i]!;
        const withDrops = seconds.flatMap((n, k) => (n > 0 ? [k] : []));
        console.log(`${who}'s sender, drops per second over the window: ${seconds.join(' ')}`);
        expect(withDrops.length === 0 || withDrops[withDrops.length - 1]! - withDrops[0]! <= 1, `${who}'s sender dropped in one burst at most on the clean path (per second: ${seconds.join(' ')})`).toBe(true);
      }
      expect(Math.abs(missedPercent - transitPercent), `${who}'s lost (missed − late) % ${missedPercent.toFixed(2)} vs lost in transit ${transitPercent.toFixed(2)} % (messages sent ${sent}, received ${got}; its sender dropped ${senderDropped}; ${JSON.stringify(d)})`).toBeLessThanOrEqual(tol);
      // And the path lost what the relay was told to drop, at least (bundling only adds).
      if (imp.dropPercent > 0) expect(transitPercent, `${who}: lost in transit vs the relay's ${appliedPercent.toFixed(2)} %`).toBeGreaterThan(appliedPercent * 0.5);
      // (Unlike the namespace link, where SCTP's one retransmission of a dropped chunk is in time,
      // here it is not: measured late 0, the dropped frames all count lost.)
      expect(d.rejected).toBe(0);
      expect(s1[i]!.channelState).toBe('open');
    }
    if (imp.dropPercent > 0) {
      expect(appliedPercent).toBeGreaterThan(imp.dropPercent * 0.6);
      expect(appliedPercent).toBeLessThan(imp.dropPercent * 1.4);
    }
    if (imp.reorderPercent > 0) expect(r1.reordered - r0.reordered, 'the relay reordered datagrams').toBeGreaterThan(up * imp.reorderPercent * 0.002);
  } finally {
    await Promise.all(peers.map((p) => p.close()));
    await server?.close();
    await relay?.close();
    await turn?.close();
  }
}

