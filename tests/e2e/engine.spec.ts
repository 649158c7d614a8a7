// The audio engine between real browsers: separate Chromium processes, each fed its own WAV as
// the microphone, join one room through the UI and must hear each other bit-exactly. The first
// tests compare the taps of two test-build pages; the last proves the same of the production
// build, which has no tap: its stream, received by a test-build page, is its input verbatim.

import { expect, test, type Page } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { installAudit, readAudit } from '../support/audit.ts';
import { THREE_ON_TWO_CORES, joinRoom, launchPeer, netWorker, type PeerBrowser } from '../support/browsers.ts';
import { startServer, type RunningServer } from '../support/server.ts';
import { FRAMES_PER_SECOND, delta, freshStats, onlyPeer, stats, waitForPeers } from '../support/stats.ts';
import { feedExactInput } from '../support/exact-input.ts';
import { readPcm, workerGlobals } from '../support/taps.ts';
import { INPUT_BUFFER_FRAMES, matchWav, readWavPcm } from '../support/wav-match.ts';
import { udpReceiveDrops } from '../support/kernel-drops.ts';
import { tonePower, writeToneWav, zeroCrossingHz } from '../support/wav.ts';
import { floatToPcm16 } from '../../src/shared/wire.ts';

const tmp = join(import.meta.dirname, '..', '.tmp');

let server: RunningServer;
const wav = { a: '', b: '', c: '', a24: '' };

test.beforeAll(async () => {
  mkdirSync(tmp, { recursive: true });
  wav.a = writeToneWav(join(tmp, 'peer-a.wav'), { leftHz: 440, rightHz: 660, seconds: 5 });
  wav.b = writeToneWav(join(tmp, 'peer-b.wav'), { leftHz: 1000, rightHz: 1250, seconds: 5 });
  wav.c = writeToneWav(join(tmp, 'peer-c.wav'), { leftHz: 2000, rightHz: 2000, seconds: 5 });
  wav.a24 = writeToneWav(join(tmp, 'peer-a24.wav'), { leftHz: 440, rightHz: 660, seconds: 5, bits: 24 });
  // Both builds, one hub: the first tests read taps (test build, server.url); the last sends from
  // the production build (server.urls.production) into a test-build receiver.
  server = await startServer({ build: ['test', 'production'] });
});
test.afterAll(async () => {
  await server?.close();
});

interface TapSnapshot {
  streamId: number;
  sent: { seqs: number[]; hashes: number[] };
  received: Record<string, { seqs: number[]; hashes: number[] }>;
  signal: number[];
}

async function readTap(page: Page): Promise<TapSnapshot> {
  const w = await netWorker(page);
  return w.evaluate(() => {
    // Runs in the network worker, not on the page's main thread.
    const t = (self as unknown as { __tuttiTap: import('../../workers/test-tap.ts').Tap }).__tuttiTap;
    const received: Record<string, { seqs: number[]; hashes: number[] }> = {};
    for (const [id, log] of t.received) received[id] = log.toJSON();
    // The sent signal is kept circularly: put it in time order, oldest first (a wrap point in the
    // middle is a jump in the tone's phase).
    const sig = t.sentSignal;
    const n = Math.min(t.sentSignalLength, sig.length);
    const from = t.sentSignalLength % sig.length;
    const signal = n < sig.length ? Array.from(sig.subarray(0, n)) : [...sig.subarray(from), ...sig.subarray(0, from)];
    return { streamId: t.streamId, sent: t.sent.toJSON(), received, signal };
  });
}

async function debugState(page: Page): Promise<{ peers: string[]; channelStates: string[]; slotStates: number[] }> {
  const w = await netWorker(page);
  return w.evaluate(() => (self as unknown as { __tuttiWorker: { debugState(): { peers: string[]; channelStates: string[]; slotStates: number[] } } }).__tuttiWorker.debugState());
}

/** Every frame `receiver` decoded from `sender` matches the hash `sender` recorded when encoding it. */
function compareTaps(sender: TapSnapshot, receiverLog: { seqs: number[]; hashes: number[] }): { compared: number; mismatched: number } {
  const sentBySeq = new Map<number, number>();
  sender.sent.seqs.forEach((s, i) => sentBySeq.set(s, sender.sent.hashes[i]!));
  let compared = 0;
  let mismatched = 0;
  receiverLog.seqs.forEach((s, i) => {
    const h = sentBySeq.get(s);
    if (h === undefined) return; // sent before the sender's tap window (cannot happen in 2 min)
    compared++;
    if (h !== receiverLog.hashes[i]) mismatched++;
  });
  return { compared, mismatched };
}

test('two browsers hear each other: bit-exact PCM, no late or lost frames, main thread untouched', async () => {
  const peers: PeerBrowser[] = [];
  try {
    const a = await launchPeer({ wav: wav.a });
    const b = await launchPeer({ wav: wav.b });
    peers.push(a, b);
    await installAudit(a.page);
    await installAudit(b.page);
    await joinRoom(a.page, server.url, 'duo', 'Alice');
    await joinRoom(b.page, server.url, 'duo', 'Bob');
    await expect(a.page.locator('tutti-peer-strip')).toContainText('Bob');
    await expect(b.page.locator('tutti-peer-strip')).toContainText('Alice');
    await waitForPeers(a.page, 1);
    await waitForPeers(b.page, 1);
    await a.page.waitForTimeout(2000); // let both pipelines settle

    const before = [await stats(a.page), await stats(b.page)];
    const auditBefore = [await readAudit(a.page), await readAudit(b.page)];
    await a.page.waitForTimeout(10_500);
    const after = [await stats(a.page), await stats(b.page)];
    const auditAfter = [await readAudit(a.page), await readAudit(b.page)];

    // Both sides' figures first, then the checks (a failure on one side still shows the other).
    const seen = [0, 1].map((i) => {
      const p0 = before[i]!.peers[0]!;
      const p1 = after[i]!.peers[0]!;
      const received = p1.received - p0.received;
      const late = p1.late - p0.late;
      const lost = p1.lost - p0.lost;
      // Where a lost frame went: the other side's sender dropped it (congested), or the wire did.
      const otherDropped = after[1 - i]!.peers[0]!.sendDropped - before[1 - i]!.peers[0]!.sendDropped;
      console.log(`peer ${i ? 'B' : 'A'}: +${received} frames in 10 s, late ${late}, lost ${lost}, underruns ${p1.underruns - p0.underruns}, trimmed ${p1.trimmed - p0.trimmed}; its sender dropped ${otherDropped}; latency p50 ${p1.latencyMs?.p50} ms p99 ${p1.latencyMs?.p99} ms, worker ${after[i]!.workerCpuMsPerSecond} ms/s`);
      return { p1, received, late, lost };
    });
    for (const { p1, received, late, lost } of seen) {
      expect(received, 'frames received in 10 s').toBeGreaterThan(FRAMES_PER_SECOND * 10 * 0.95);
      expect(late + lost, `late ${late} + lost ${lost} over 10 s at the default depth`).toBe(0);
      expect(p1.rejected).toBe(0);
      // The adaptive depth is running: a target in range, a measured fill, a channel round trip.
      expect(p1.fill.target).toBeGreaterThanOrEqual(1);
      expect(p1.fill.target).toBeLessThanOrEqual(32);
      expect(p1.rttMs, 'ping/pong round trip over the audio channel').not.toBeNull();
    }

    // Bit-exact: every frame each side decoded equals what the other encoded.
    const tapA = await readTap(a.page);
    const tapB = await readTap(b.page);
    const [aId] = Object.keys(tapB.received);
    const [bId] = Object.keys(tapA.received);
    const aToB = compareTaps(tapA, tapB.received[aId!]!);
    const bToA = compareTaps(tapB, tapA.received[bId!]!);
    console.log(`bit-exact: A→B ${aToB.compared} frames compared, ${aToB.mismatched} differ; B→A ${bToA.compared} compared, ${bToA.mismatched} differ`);
    for (const r of [aToB, bToA]) {
      expect(r.compared).toBeGreaterThan(FRAMES_PER_SECOND * 12);
      expect(r.mismatched).toBe(0);
    }
    // Each side sent its own WAV: A's 440 Hz, B's 1000 Hz on the left channel. (Goertzel power, not
    // zero crossings: the fake capture device glitches now and then under load.)
    console.log(`sent tones: A ~${Math.round(zeroCrossingHz(tapA.signal))} Hz, B ~${Math.round(zeroCrossingHz(tapB.signal))} Hz by zero crossings`);
    expect(tonePower(tapA.signal, 440)).toBeGreaterThan(20 * tonePower(tapA.signal, 1000));
    expect(tonePower(tapB.signal, 1000)).toBeGreaterThan(20 * tonePower(tapB.signal, 440));
    expect(tonePower(tapA.signal, 440)).toBeGreaterThan(0.01); // a 0.4-amplitude sine gives 0.04

    // The main thread handled no audio frame: no DataChannel events, no binary payloads, and only
    // control messages at a low rate (stats at 2 Hz, signaling).
    for (let i = 0; i < 2; i++) {
      const au = auditAfter[i]!;
      const events = au.events - auditBefore[i]!.events;
      console.log(`main thread ${i ? 'B' : 'A'}: ${JSON.stringify(au)}`);
      expect(au.dataChannelEvents).toBe(0);
      expect(au.binaryEvents).toBe(0);
      expect(events / 10.5).toBeLessThan(10);
      for (const t of Object.keys(au.byType)) expect(['ready', 'stats', 'peer-open', 'peer-closed', 'string']).toContain(t);
    }
  } finally {
    await Promise.all(peers.map((p) => p.close()));
  }
});

test('two quanta per packet, chosen in the room view: half the packets, every frame bit-exact from the copies, nothing lost or late; the other side unchanged', async () => {
  const peers: PeerBrowser[] = [];
  try {
    const a = await launchPeer({ wav: wav.a });
    const b = await launchPeer({ wav: wav.b });
    peers.push(a, b);
    await joinRoom(a.page, server.url, 'packed', 'Alice');
    await joinRoom(b.page, server.url, 'packed', 'Bob');
    await waitForPeers(a.page, 1);
    await waitForPeers(b.page, 1);
    // Bob, on a busy computer, picks 5.3 ms packets in the room view.
    await b.page.locator('select[name=per-packet]').selectOption('2');
    await expect.poll(async () => (await stats(b.page))?.perPacket, { timeout: 5000 }).toBe(2);
    await a.page.waitForTimeout(3000); // Alice's depth meets the pairs

    const before = [await stats(a.page), await stats(b.page)];
    await a.page.waitForTimeout(10_500);
    const after = [await stats(a.page), await stats(b.page)];
    const fromBob = delta(before[0]!.peers[0]!, after[0]!.peers[0]!);
    const fromAlice = delta(before[1]!.peers[0]!, after[1]!.peers[0]!);
    const bobDropped = after[1]!.peers[0]!.sendDropped - before[1]!.peers[0]!.sendDropped;
    console.log(`Bob sends ${after[1]!.sendFramesPerSecond} frames/s in ${after[1]!.sendPacketsPerSecond} packets/s, Alice ${after[0]!.sendFramesPerSecond} in ${after[0]!.sendPacketsPerSecond}; Alice from Bob over 10 s: +${fromBob.received} as packets, +${fromBob.recovered} from their copies, late ${fromBob.late}, lost ${fromBob.lost}, underruns ${fromBob.underruns}, depth ${after[0]!.peers[0]!.depth}, latency p50 ${after[0]!.peers[0]!.latencyMs?.p50} ms (Bob from Alice ${after[1]!.peers[0]!.latencyMs?.p50} ms); Bob's sender dropped ${bobDropped}`);
    expect(after[1]!.sendFramesPerSecond, "Bob's frames a second").toBeGreaterThan(FRAMES_PER_SECOND * 0.95);
    expect(Math.abs(after[1]!.sendPacketsPerSecond - FRAMES_PER_SECOND / 2), "Bob's packets a second: half his frames").toBeLessThanOrEqual(FRAMES_PER_SECOND * 0.05);
    expect(Math.abs(after[0]!.sendPacketsPerSecond - FRAMES_PER_SECOND), "Alice's: one per frame").toBeLessThanOrEqual(FRAMES_PER_SECOND * 0.05);
    // Every one of Bob's frames reaches Alice: one of each pair as the packet, the other from its copy.
    expect(fromBob.received + fromBob.recovered, 'frames from Bob in 10 s').toBeGreaterThan(FRAMES_PER_SECOND * 10 * 0.95);
    expect(Math.abs(fromBob.recovered - fromBob.received), 'half of them from the copies').toBeLessThanOrEqual(FRAMES_PER_SECOND * 0.2);
    expect(fromBob.late + fromBob.lost + bobDropped, 'late, lost or dropped').toBe(0);
    expect(fromAlice.recovered + fromAlice.lost + fromAlice.late, "Alice's stream: one frame per packet, as before").toBe(0);

    // Bit-exact: every frame Alice decoded of Bob's, from a packet or a copy, is what he encoded.
    const tapA = await readTap(a.page);
    const tapB = await readTap(b.page);
    const [bId] = Object.keys(tapA.received);
    const bToA = compareTaps(tapB, tapA.received[bId!]!);
    console.log(`bit-exact B→A at two quanta per packet: ${bToA.compared} frames compared, ${bToA.mismatched} differ`);
    expect(bToA.compared).toBeGreaterThan(FRAMES_PER_SECOND * 12);
    expect(bToA.mismatched).toBe(0);
    // The choice is this device's: a new page load keeps it.
    await joinRoom(b.page, server.url, 'packed', 'Bob');
    await expect(b.page.locator('select[name=per-packet]')).toHaveValue('2');
    await expect.poll(async () => (await stats(b.page))?.perPacket, { timeout: 10_000 }).toBe(2);
  } finally {
    await Promise.all(peers.map((p) => p.close()));
  }
});

test('a third peer (sending mono) is mixed in, bit-exact; a peer that leaves frees its channel and slot', async () => {
  const peers: PeerBrowser[] = [];
  try {
    const a = await launchPeer({ wav: wav.a });
    const b = await launchPeer({ wav: wav.b });
    const c = await launchPeer({ wav: wav.c });
    peers.push(a, b, c);
    // Three browsers on two cores: each picks two quanta per packet (THREE_ON_TWO_CORES). At one
    // they glitch by the thousand in 10 s (docs/BENCHMARKS.md "room-cpu"): a clean-clone CI run
    // here played 496 frames in 3 s, where the test asks whether a third peer is mixed in.
    await joinRoom(a.page, server.url, 'trio', 'Alice', THREE_ON_TWO_CORES);
    await joinRoom(b.page, server.url, 'trio', 'Bob', THREE_ON_TWO_CORES);
    await waitForPeers(a.page, 1);
    await joinRoom(c.page, server.url, 'trio', 'Carol', { channels: 1, ...THREE_ON_TWO_CORES });
    const s = await waitForPeers(a.page, 2);
    await waitForPeers(c.page, 2);
    expect(s.peers.map((p) => p.slot).sort()).toEqual([0, 1]);

    // Carol's mono stream decodes bit-exactly at Alice too.
    await a.page.waitForTimeout(1000);
    const tapC = await readTap(c.page);
    const tapA = await readTap(a.page);
    // Sequence numbers start at a random value per sender, so only Carol's log matches her sequences.
    const fromCarol = Object.values(tapA.received).map((log) => compareTaps(tapC, log)).find((r) => r.compared > 0);
    expect(fromCarol, 'Alice decoded frames of Carol').toBeDefined();
    expect(fromCarol!.compared).toBeGreaterThan(FRAMES_PER_SECOND / 2);
    expect(fromCarol!.mismatched).toBe(0);

    // Both remote streams are mixed: played counters advance and both meters move. Two stats
    // as they arrive (once a second), 2.5 s or more apart: each peer played the span's frames,
    // but for a second's (what two reads of the page's stats 2.5 s apart asked, when they were at
    // least a second apart; on a loaded machine they were not always).
    const f0 = await freshStats(a.page);
    await a.page.waitForTimeout(2500);
    const f1 = await freshStats(a.page);
    const t0 = f0.stats;
    const t1 = f1.stats;
    for (const p of t1.peers) {
      const p0 = t0.peers.find((q) => q.peerId === p.peerId)!;
      console.log(`${p.peerId}: played ${p.played - p0.played} frames between stats received ${((f1.atMs - f0.atMs) / 1000).toFixed(2)} s apart (underruns ${p.underruns - p0.underruns}, missed ${p.missed - p0.missed})`);
      expect(p.played - p0.played).toBeGreaterThan(FRAMES_PER_SECOND * ((f1.atMs - f0.atMs) / 1000 - 1));
    }
    const levels = await a.page.evaluate(() => {
      const strips = [...document.querySelector('tutti-app')!.shadowRoot!.querySelector('tutti-room')!.shadowRoot!.querySelectorAll('tutti-peer-strip')];
      return strips.map((el) => Number(el.shadowRoot!.querySelector('tutti-meter')!.getAttribute('aria-valuenow')));
    });
    expect(levels.length).toBe(2);
    for (const l of levels) expect(l).toBeGreaterThan(30);

    // Per-peer mute silences only that peer's meter.
    await a.page.getByRole('button', { name: 'Mute Carol' }).click();
    await expect
      .poll(() => a.page.evaluate(() => {
        const strip = [...document.querySelector('tutti-app')!.shadowRoot!.querySelector('tutti-room')!.shadowRoot!.querySelectorAll('tutti-peer-strip')].find((el) => (el as unknown as { member: { name: string } }).member.name === 'Carol')!;
        return Number(strip.shadowRoot!.querySelector('tutti-meter')!.getAttribute('aria-valuenow'));
      }), { timeout: 10_000 })
      .toBe(0);

    // A manual depth, changed live, is reached by rate steering (no skip, no hold): the measured
    // low point of the buffer settles at the new target.
    await a.page.getByRole('checkbox', { name: 'Automatic jitter buffer' }).uncheck();
    await a.page.getByRole('slider', { name: /Jitter buffer/ }).fill('16');
    await expect
      .poll(async () => (await stats(a.page))!.peers.every((p) => p.fill.target === 16 && p.fill.avg >= 14), { timeout: 30_000 })
      .toBe(true);

    // Carol leaves: Alice's worker closes her channel and frees her slot; Bob keeps streaming.
    const before = await debugState(a.page);
    expect(before.peers.length).toBe(2);
    await c.page.getByRole('button', { name: 'Leave' }).click();
    await expect.poll(async () => (await debugState(a.page)).peers.length, { timeout: 15_000 }).toBe(1);
    const after = await debugState(a.page);
    expect(after.slotStates.filter((x) => x !== 0).length).toBe(1); // only Bob's slot is not FREE
    await expect(a.page.locator('tutti-peer-strip')).toHaveCount(1);
    await waitForPeers(a.page, 1);
  } finally {
    await Promise.all(peers.map((p) => p.close()));
  }
});

test('24-bit: switched on live, a sender\'s stream is its 24-bit input verbatim at the receiver (low bits included) while the other side sends 16-bit; a peer with an app from before 24-bit gets 16-bit', async () => {
  const peers: PeerBrowser[] = [];
  try {
    const a = await launchPeer({ wav: wav.a });
    const b = await launchPeer({ wav: wav.b });
    const c = await launchPeer({ wav: wav.c });
    peers.push(a, b, c);
    // A's microphone is a 24-bit WAV exactly, whose low 8 bits carry signal: a 16-bit hop anywhere
    // on the way would change nearly every sample.
    await feedExactInput(a.page, wav.a24);
    await joinRoom(a.page, server.url, 'duo24', 'Alice');
    await joinRoom(b.page, server.url, 'duo24', 'Bob');
    await waitForPeers(a.page, 1);
    await waitForPeers(b.page, 1);
    await expect.poll(async () => (await onlyPeer(b.page)).bits, { timeout: 10_000 }).toBe(16);

    // The player chooses 24-bit in the room, without rejoining; B's worker sees 24-bit packets.
    await expect(a.page.getByLabel('Resolution')).toContainText('24-bit · 4650 kbit/s per peer');
    await a.page.getByLabel('Resolution').selectOption('24');
    await expect.poll(async () => (await onlyPeer(b.page)).bits, { timeout: 10_000 }).toBe(24);
    await expect.poll(async () => (await onlyPeer(a.page)).sendBits, { timeout: 10_000 }).toBe(24);
    const before = [await onlyPeer(a.page), await onlyPeer(b.page)];
    // Frames Alice's microphone track lost since a moment (whole buffers; the worker sees a loss
    // within ~1.5 s): each quantum the matcher finds spliced inside must be one of those losses.
    const captureLost = async () => (await stats(a.page))?.captureLostFrames ?? 0;
    const spliceCounted = async (since: number, spliced: number, what: string) => {
      if (spliced === 0) return;
      await expect.poll(async () => (await captureLost()) - since, { message: `${what}: ${spliced} quanta spliced inside; Alice's track must have lost a buffer for each`, timeout: 5_000 }).toBeGreaterThanOrEqual(spliced * INPUT_BUFFER_FRAMES);
    };
    const lostBeforeB = await captureLost();
    await a.page.waitForTimeout(6500); // the tap keeps the last 6 s of decoded PCM: all of it 24-bit
    const after = [await onlyPeer(a.page), await onlyPeer(b.page)];

    const pcm = await readPcm(b.page);
    const logs = Object.values(pcm.received);
    expect(logs.length).toBe(1);
    const m = matchWav(readWavPcm(wav.a24), logs[0]!);
    // A busy machine (a CI run: 2 browsers at 4.7 Mbit/s on 2 cores) can make Alice's sender drop
    // frames it could only send late (workers/sender.ts), which it counts: a missing sequence at
    // Bob is one of those, never a frame lost on the way or a format that failed to decode.
    const aDropped = after[0]!.sendDropped - before[0]!.sendDropped;
    console.log(`A→B (24-bit) against peer-a24.wav: ${JSON.stringify(m)}; B receives ${after[1]!.kbpsIn} kbit/s from A, A ${after[0]!.kbpsIn} kbit/s from B; Alice's sender dropped ${aDropped} meanwhile`);
    expect(m.quanta).toBeGreaterThan(FRAMES_PER_SECOND * 5);
    expect(m.repeats + m.silent).toBe(0);
    expect(m.gaps, "every sequence missing at Bob is one Alice's sender says it dropped").toBeLessThanOrEqual(aDropped);
    // A quantum spliced where Alice's microphone track lost a buffer (tests/support/wav-match.ts)
    // is the WAV sample for sample in two parts, and that loss is counted.
    expect(m.verbatim + m.spliced, `every quantum is the 24-bit WAV, sample for sample: ${m.misses.join('; ')}`).toBe(m.quanta);
    await spliceCounted(lostBeforeB, m.spliced, 'A→B');
    // The bytes on the wire: 1550-byte packets (two PCM24 stereo quanta) at 375/s, against 1038 for PCM16.
    expect(after[1]!.kbpsIn).toBeGreaterThan(4400);
    expect(after[0]!.kbpsIn).toBeLessThan(3300);
    expect(after[0]!.bits, 'B still sends 16-bit').toBe(16);

    // Both directions bit-exact by the taps' hashes, over the whole session (16-bit before the switch).
    const tapA = await readTap(a.page);
    const tapB = await readTap(b.page);
    const aToB = compareTaps(tapA, tapB.received[Object.keys(tapB.received)[0]!]!);
    const bToA = compareTaps(tapB, tapA.received[Object.keys(tapA.received)[0]!]!);
    console.log(`bit-exact: A→B ${aToB.compared} compared, ${aToB.mismatched} differ; B→A ${bToA.compared} compared, ${bToA.mismatched} differ`);
    for (const r of [aToB, bToA]) {
      expect(r.compared).toBeGreaterThan(FRAMES_PER_SECOND * 6);
      expect(r.mismatched).toBe(0);
    }
    for (let i = 0; i < 2; i++) {
      const d = delta(before[i]!, after[i]!);
      expect(d.rejected + d.late).toBe(0);
    }

    // Carol's app predates 24-bit (test switch: she publishes no wire version and her decoder
    // rejects version-2 packets). Alice sends her PCM16, Bob still PCM24; nothing is rejected.
    // Three browsers on two cores: each picks two quanta per packet (THREE_ON_TWO_CORES), the two
    // in the room already from their room views.
    const lostBeforeC = await captureLost();
    for (const p of [a.page, b.page]) await p.locator('select[name=per-packet]').selectOption('2');
    await joinRoom(c.page, server.url, 'duo24', 'Carol', { query: 'test=tap&wire=1', ...THREE_ON_TWO_CORES });
    await waitForPeers(c.page, 2);
    await waitForPeers(a.page, 2);
    await c.page.waitForTimeout(6500);
    // Alice's governor may step a link down for a busy machine (3 browsers on 2 cores while Carol's
    // starts): a mono mixdown is sent as PCM16 (sendMono), and the link steps back up after a clean
    // stretch (workers/send-governor.ts). The format choice is what is checked: wait for the ladder's top.
    const sending = async () => ((await stats(a.page))?.peers ?? []).map((p) => `${p.sendBits}-bit${p.sendMono ? ' mono' : ''}, ${p.sendRedundancy} copies, ${p.sendDropped} dropped`);
    console.log(`Alice sends, 6.5 s after Carol joined: ${(await sending()).join('; ')}`);
    // Bob's figure is his worker's last snapshot (STATS_INTERVAL_MS) of the last packet he had from
    // Alice: it can still show the mono PCM16 of a step that Alice's own stats have already left.
    // So wait until both ends show the ladder's top, then read all three.
    const aId = Object.keys(tapB.received)[0]!; // Alice's mesh id, as Bob knows her
    const bobHearsAliceBits = async () => ((await stats(b.page))?.peers ?? []).find((p) => p.peerId === aId)?.bits;
    await expect.poll(async () => ((await stats(a.page))?.peers ?? []).filter((p) => !p.sendMono).length, { timeout: 30_000 }).toBe(2);
    await expect.poll(bobHearsAliceBits, { timeout: 30_000 }).toBe(24);
    const aStats = (await stats(a.page))!.peers;
    const cStats = (await stats(c.page))!.peers;
    const bStats = (await stats(b.page))!.peers;
    const cFromA = cStats.find((p) => p.peerId === aId)!;
    console.log(`Alice sends: ${aStats.map((p) => `${p.peerId.slice(0, 6)} ${p.sendBits}-bit`).join(', ')}; Carol receives from Alice ${cFromA.bits}-bit, rejected ${cStats.map((p) => p.rejected).join(', ')}; Bob from Alice ${bStats.find((p) => p.peerId === aId)!.bits}-bit`);
    expect(aStats.map((p) => p.sendBits).sort()).toEqual([16, 24]);
    expect(cFromA.bits).toBe(16);
    expect(cStats.every((p) => p.rejected === 0)).toBe(true);
    expect(bStats.find((p) => p.peerId === aId)!.bits).toBe(24);
    // What Carol hears of Alice is Alice's 24-bit input rounded to 16 bits, sample for sample; or,
    // from a stretch the governor had stepped the link down (the tap keeps the last 6 s, which
    // can reach back before the step up), its mono mixdown as PCM16, sample for sample.
    const input24 = readWavPcm(wav.a24);
    const input16 = input24.map((x) => floatToPcm16(x / 8_388_608) * 256);
    const mc = matchWav(input16, (await readPcm(c.page)).received[aId]!, { mixFrom: input24 });
    console.log(`A→C (16-bit) against peer-a24.wav at 16 bits: ${JSON.stringify(mc)}`);
    expect(mc.quanta).toBeGreaterThan(FRAMES_PER_SECOND * 5);
    expect(mc.verbatim, 'the stereo 16-bit stream since the link is at the top of its ladder').toBeGreaterThan(0);
    expect(mc.verbatim + mc.mono + mc.silent + mc.spliced, `every quantum Alice's input at 16 bits, stereo or its mono mixdown: ${mc.misses.join('; ')}`).toBe(mc.quanta);
    await spliceCounted(lostBeforeC, mc.spliced, 'A→C');

    // The choice is this device's: Alice's next page (a reload, the join form again) sends 24-bit
    // from the start, to Bob, and 16-bit to Carol.
    await joinRoom(a.page, server.url, 'duo24', 'Alice');
    await expect(a.page.getByLabel('Resolution')).toHaveValue('24');
    await expect.poll(async () => ((await stats(a.page))?.peers ?? []).map((p) => p.sendBits).sort(), { timeout: 30_000 }).toEqual([16, 24]);
  } finally {
    await Promise.all(peers.map((p) => p.close()));
  }
});

test('production build: a production sender\'s stream is bit-exact at a test-build receiver (its input sample for sample, no gap), and a production receiver gets every frame', async () => {
  const peers: PeerBrowser[] = [];
  try {
    const a = await launchPeer({ wav: wav.a }); // production: no tap, no debug globals
    const b = await launchPeer({ wav: wav.b }); // test build with a tap
    peers.push(a, b);
    // A's input is peer-a.wav exactly (the fake device is not bit-exact): then every quantum A
    // sends is known without a tap on A.
    await feedExactInput(a.page, wav.a);
    await joinRoom(a.page, server.urls.production!, 'prod-duo', 'Alice', { query: '' });
    await joinRoom(b.page, server.url, 'prod-duo', 'Bob');
    await waitForPeers(a.page, 1);
    await waitForPeers(b.page, 1);
    expect(await workerGlobals(a.page), 'the production worker exposes no tap and no debug hook').toEqual({ tap: false, worker: false });
    await a.page.waitForTimeout(2000);

    const kernelBefore = udpReceiveDrops();
    const before = [await onlyPeer(a.page), await onlyPeer(b.page)];
    await a.page.waitForTimeout(6500); // the tap keeps the last 6 s of decoded PCM
    const after = [await onlyPeer(a.page), await onlyPeer(b.page)];
    const kernelDrops = udpReceiveDrops() - kernelBefore;
    const pcm = await readPcm(b.page);
    const logs = Object.values(pcm.received);
    expect(logs.length).toBe(1);
    const m = matchWav(readWavPcm(wav.a), logs[0]!);
    console.log(`A→B against peer-a.wav: ${JSON.stringify(m)}`);

    for (let i = 0; i < 2; i++) {
      const d = delta(before[i]!, after[i]!);
      // The other side's own record of what it did not send to this one (its congestion rule).
      const senderDropped = after[1 - i]!.sendDropped - before[1 - i]!.sendDropped;
      console.log(`${i ? 'B (test build) from A (production)' : 'A (production) from B'}: +${d.received} frames, late ${d.late}, lost ${d.lost}, recovered ${d.recovered}, rejected ${d.rejected}, resyncs ${d.resyncs}, underruns ${d.underruns}, trimmed ${after[i]!.trimmed - before[i]!.trimmed}; its sender dropped ${senderDropped}; the kernel dropped ${kernelDrops} datagrams at full sockets`);
      // Stats come at 1 Hz: two readings 6.5 s apart are at least 6 whole seconds apart.
      expect(d.received, 'frames received in 6.5 s').toBeGreaterThan(FRAMES_PER_SECOND * 6 * 0.95);
      expect(d.late + d.rejected).toBe(0);
      // Nothing lost but what never reached the browser: datagrams the kernel dropped while a
      // stalled browser left its socket full (two clean-clone runs: 7 frames lost in a row, 1
      // more recovered, the sender having dropped none). An SCTP packet carries at most two frames.
      expect(d.lost, `lost ${d.lost} with ${kernelDrops} datagrams dropped by the kernel`).toBeLessThanOrEqual(2 * kernelDrops);
    }

    expect(m.quanta).toBeGreaterThan(FRAMES_PER_SECOND * 5);
    expect(m.gaps + m.repeats + m.silent).toBe(0);
    expect(m.verbatim, `every quantum is the WAV, sample for sample: ${m.misses.join('; ')}`).toBe(m.quanta);
    expect(m.continued, 'each quantum the input\'s next 128 frames').toBeGreaterThan(m.quanta * 0.99);
  } finally {
    await Promise.all(peers.map((p) => p.close()));
  }
});
