// Set-up C of the mouth-to-ear scenario (Node, Playwright): two Tutti browser processes on the rig
// joined through the real UI and server, and what the receiving app says about its own latency at
// the moment of a measurement.
//
// The sender captures `mic`, plays into `silent` (its own speaker, as on its own computer) and has
// its output volume at 0 (it would play the receiver's stream, which is silence anyway); the
// receiver plays into `spk`, captures `silent.monitor` and is muted, so the only thing Tutti adds
// to the recording is the sender's microphone at the receiver, and the receiver's speaker carries
// one stream, as in set-ups A and W. (Until 2026-11-26 the sender also played into `spk`: a second
// stream on a PulseAudio sink makes the browser's output timestamp read 1.9-5.6 ms early, one
// figure per stream start, which no computer of two musicians has from the other one.)

import type { Page } from '@playwright/test';
import type { StatsMessage } from '../../src/shared/worker-protocol.ts';
import { joinRoom, launchOnRig, type PeerBrowser } from '../../tests/support/browsers.ts';
import { median, setDepth, stats, waitForStreams } from '../lib/app.ts';
import type { OneWaySecond } from './one-way-per-click.ts';
import type { Rig } from '../../tests/support/audio-rig.ts';

export interface TuttiPair {
  sender: PeerBrowser;
  receiver: PeerBrowser;
  close(): Promise<void>;
}

/** The devices of each side's browser process (PULSE_SINK, PULSE_SOURCE). */
export const SENDER_DEVICES = { sink: 'silent', source: 'mic' } as const;
export const RECEIVER_DEVICES = { sink: 'spk', source: 'silent.monitor' } as const;

/**
 * Launches and joins both; resolves once the receiver gets the sender's stream at ≥ 300 frames/s.
 * `receiverQuery`: test switches for the receiver's page (the segments tools' taps, a test-build
 * server only); the m2e set-ups use none.
 */
export async function joinPair(rig: Rig, serverUrl: string, room: string, receiverQuery = '', receiverDevices: { sink: string; source: string } = RECEIVER_DEVICES): Promise<TuttiPair> {
  const peers: PeerBrowser[] = [];
  const close = async () => {
    await Promise.all(peers.map((p) => p.close()));
  };
  try {
    const sender = await launchOnRig(rig, SENDER_DEVICES);
    peers.push(sender);
    const receiver = await launchOnRig(rig, receiverDevices);
    peers.push(receiver);
    // No query for the sender: no test switches, the app as a user gets it.
    await joinRoom(sender.page, serverUrl, room, 'Sender', { query: '' });
    await sender.page.locator('input[name="master"]').fill('0');
    await joinRoom(receiver.page, serverUrl, room, 'Receiver', { query: receiverQuery });
    const mute = receiver.page.getByRole('button', { name: 'Mute', exact: true });
    await mute.click();
    await receiver.page.locator('button.mute[aria-pressed="true"]').waitFor({ timeout: 5000 });
    await waitForStreams(receiver.page, 1, 300);
    return { sender, receiver, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A manual depth on the receiver (the one that buffers the measured stream), through its UI. */
export function setReceiverDepth(pair: TuttiPair, depth: number): Promise<void> {
  return setDepth(pair.receiver.page, depth);
}

/** What the receiving app showed during one measurement window. */
export interface AppFigures {
  /** Whether the depth was chosen automatically, and the target depth in quanta at the end. */
  adaptive: boolean | null;
  depth: number | null;
  /** The lowest and highest target depth in the stats during the window. */
  depthMin: number | null;
  depthMax: number | null;
  fillAvg: number | null;
  fillMin: number | null;
  /** The added-latency stat (capture timestamp to playout, without device I/O), median of the window's p50s / p99s, ms. */
  addedP50Ms: number | null;
  addedP99Ms: number | null;
  /** The peer strip's "One-way ≈" estimate, ms, and its parts as the strip's tooltip lists them. */
  oneWayMs: number | null;
  oneWayParts: string | null;
  /** The one-way stat behind it (PeerStats.oneWayMs: capture stamp → our speaker by the output clock), median of the window's p50s, ms. */
  oneWayStatMs: number | null;
  /** Each stats second's one-way p50 with the wall time the bench read it (bench/m2e/one-way-per-click.ts pairs them with the clicks). */
  oneWaySeconds: OneWaySecond[];
  rttMs: number | null;
  driftPpm: number | null;
  /**
   * Counted from the stream's start to the window's first stats message (a C default window's
   * join: its first second or two, where our output loses 10-60 ms under the join's load on the
   * rig; bench/m2e/segments/start-up.ts). A listener hears these too; null where not read.
   */
  beforeWindow: { underruns: number; trimmed: number; late: number; lost: number } | null;
  /** Counted during the window. */
  underruns: number;
  trimmed: number;
  late: number;
  lost: number;
  concealed: number;
  /**
   * The receiver's speaker dropouts during the window (StatsMessage.output: the device asked and
   * the browser had nothing ready, whoever was heard), events and ms; null where the browser does not tell.
   */
  speakerDropouts: number | null;
  speakerDropoutMs: number | null;
  /**
   * Our output's stalls during the window as the receiver's speaker dating saw them
   * (StatsMessage.outputStalls: steps of STALL_STEP_QUANTA or more, each followed by a trim of
   * the audio that piled up meanwhile), and the time they lost, ms.
   */
  outputStalls: number;
  outputStalledMs: number;
  /** Frames the sender did not send to the receiver during the window (its congestion rule). */
  senderDropped: number;
  /**
   * The sender's own output stalls during the window, as its speaker dating saw them (the same
   * StatsMessage.outputStalls, read from the sender's page before and after), and the time they
   * lost, ms. Evidence only: the sender reads its microphone in its network worker
   * (MediaStreamTrackProcessor), not on its output's clock, so its sends need not stop with it; a
   * stall of both outputs in the same second points at the sound server. Missing (older results):
   * none known.
   */
  senderOutputStalls?: number;
  senderOutputStalledMs?: number;
  /** The sender's speaker dropouts during the window (null where the browser does not tell). */
  senderSpeakerDropouts?: number | null;
  framesPerSecond: number | null;
  /** The drift figure's lowest and highest value during the window (null before it is shown). */
  driftMinPpm: number | null;
  driftMaxPpm: number | null;
  /**
   * Each stats second of the window with a glitch, and what the depth controller held then, so that
   * an outlier brings its evidence (a glitch at the devices' rhythm or at a stall of this machine;
   * bench/m2e/segments/playout-trace.ts reads the same fields over a whole join).
   */
  glitchSeconds: GlitchSecond[];
}

/** One stats second with a glitch: seconds since the window began, the counts of that second and the playout's state. */
export interface GlitchSecond {
  t: number;
  underruns: number;
  trimmed: number;
  late: number;
  target: number;
  held: number;
  min: number;
  /**
   * The next second's lowest low point (null at the window's end): the counters and the fill
   * windows are read at different moments (a fill window is published up to 43 ms after its
   * quanta and read at the next ~100 ms update), so a dry quantum late in one second can show in
   * the next one's low point.
   */
  nextMin: number | null;
  relief: number;
  rate: number;
  driftPpm: number | null;
  /**
   * The receiver's speaker dropouts and our output's stalls (AppFigures.outputStalls) over this
   * second and the one before (a stall's trim comes ~0.15-0.2 s after it, so the two can fall in
   * neighbouring seconds): a trim beside a stall is the stall's backlog going, not the buffer's
   * rule. null where the browser does not tell.
   */
  speakerDropouts: number | null;
  outputStalls: number;
  outputStalledMs: number;
}

/**
 * Samples both apps' stats while `during` runs (the recording), and reads the one-way estimate at
 * its end. Counters are differences over the window; levels are medians or the last value.
 */
export async function appFiguresDuring<T>(pair: TuttiPair, during: () => Promise<T>): Promise<{ result: T; app: AppFigures }> {
  const before = await stats(pair.sender.page);
  const t0 = Date.now();
  const done = { value: false };
  const sampling = sampleUntil(pair.receiver.page, done);
  let result: T;
  try {
    result = await during();
  } finally {
    done.value = true;
  }
  const window = await sampling;
  const after = await stats(pair.sender.page);
  const oneWay = pair.receiver.page.locator('[data-testid="one-way"]').first();
  const oneWayText = (await oneWay.textContent({ timeout: 2000 }).catch(() => null)) ?? '';
  const oneWayParts = await oneWay.getAttribute('title', { timeout: 2000 }).catch(() => null);
  const first = window[0]?.peers[0];
  const last = window[window.length - 1]?.peers[0];
  const diff = (k: 'underruns' | 'trimmed' | 'late' | 'lost' | 'concealed') => (first && last ? (last[k] ?? 0) - (first[k] ?? 0) : 0);
  const depths = window.flatMap((m) => (m.peers[0] ? [m.peers[0].depth] : []));
  const lat = window.slice(1).flatMap((m) => (m.peers[0]?.latencyMs ? [m.peers[0].latencyMs] : []));
  const ways = window.slice(1).flatMap((m) => (m.peers[0]?.oneWayMs ? [m.peers[0].oneWayMs.p50] : []));
  const oneWayMatch = /([\d.]+)\s*ms/.exec(oneWayText);
  const drifts = window.flatMap((m) => (typeof m.peers[0]?.driftPpm === 'number' ? [m.peers[0].driftPpm] : []));
  const outFirst = window[0]?.output ?? null;
  const outLast = window[window.length - 1]?.output ?? null;
  const stalls = stallsBetween(window[0], window[window.length - 1]);
  const senderStalls = stallsBetween(before ?? undefined, after ?? undefined);
  return {
    result: result!,
    app: {
      adaptive: window[window.length - 1]?.adaptive ?? null,
      depth: last?.depth ?? null,
      depthMin: depths.length ? Math.min(...depths) : null,
      depthMax: depths.length ? Math.max(...depths) : null,
      fillAvg: last ? round1(last.fill.avg) : null,
      fillMin: last ? round1(last.fill.min) : null,
      addedP50Ms: round1(median(lat.map((l) => l.p50))),
      addedP99Ms: round1(median(lat.map((l) => l.p99))),
      oneWayMs: oneWayMatch ? Number(oneWayMatch[1]) : null,
      oneWayParts,
      oneWayStatMs: round1(median(ways)),
      // Every second, with or without a figure (none in our output's first 12 s): a click in a
      // second without one has none, not the next second's.
      oneWaySeconds: window.slice(1).flatMap((m) => (m.peers[0] ? [{ at: m.at, p50: m.peers[0].oneWayMs?.p50 ?? null }] : [])),
      rttMs: last?.rttMs === null || last?.rttMs === undefined ? null : round1(last.rttMs),
      driftPpm: last?.driftPpm ?? null,
      beforeWindow: first ? { underruns: first.underruns, trimmed: first.trimmed, late: first.late, lost: first.lost ?? 0 } : null,
      underruns: diff('underruns'),
      trimmed: diff('trimmed'),
      late: diff('late'),
      lost: diff('lost'),
      concealed: diff('concealed'),
      speakerDropouts: outFirst && outLast ? outLast.events - outFirst.events : null,
      speakerDropoutMs: outFirst && outLast ? round1(outLast.ms - outFirst.ms) : null,
      outputStalls: stalls.count,
      outputStalledMs: stalls.lostMs,
      senderDropped: (after?.peers[0]?.sendDropped ?? 0) - (before?.peers[0]?.sendDropped ?? 0),
      senderOutputStalls: senderStalls.count,
      senderOutputStalledMs: senderStalls.lostMs,
      senderSpeakerDropouts: before?.output && after?.output ? after.output.events - before.output.events : null,
      framesPerSecond: last?.framesPerSecond ?? null,
      driftMinPpm: drifts.length ? Math.min(...drifts) : null,
      driftMaxPpm: drifts.length ? Math.max(...drifts) : null,
      glitchSeconds: glitchSeconds(window, t0),
    },
  };
}

/** The window's seconds with an underrun, a trim or a late frame (each message against the one before). */
function glitchSeconds(window: readonly Sampled[], t0: number): GlitchSecond[] {
  const out: GlitchSecond[] = [];
  for (let i = 1; i < window.length; i++) {
    const a = window[i - 1]!.peers[0];
    const b = window[i]!.peers[0];
    if (!a || !b) continue;
    const underruns = b.underruns - a.underruns;
    const trimmed = b.trimmed - a.trimmed;
    const late = b.late - a.late;
    if (underruns + trimmed + late === 0) continue;
    const since = window[Math.max(0, i - 2)]!;
    const outA = since.output;
    const outB = window[i]!.output;
    const stalls = stallsBetween(since, window[i]);
    out.push({
      t: Math.round((window[i]!.at - t0) / 100) / 10,
      underruns,
      trimmed,
      late,
      target: b.fill.target,
      held: b.fill.held,
      min: b.fill.min,
      nextMin: window[i + 1]?.peers[0]?.fill.min ?? null,
      relief: b.fill.relief,
      rate: b.rate,
      driftPpm: b.driftPpm ?? null,
      speakerDropouts: outA && outB ? outB.events - outA.events : null,
      outputStalls: stalls.count,
      outputStalledMs: stalls.lostMs,
    });
  }
  return out;
}

/** Our output's stalls between two stats messages (cumulative counters; none where either is missing). */
function stallsBetween(a: StatsMessage | undefined, b: StatsMessage | undefined): { count: number; lostMs: number } {
  if (!a?.outputStalls || !b?.outputStalls) return { count: 0, lostMs: 0 };
  return { count: b.outputStalls.count - a.outputStalls.count, lostMs: round1(b.outputStalls.lostMs - a.outputStalls.lostMs) ?? 0 };
}

/** A stats message with the wall-clock time the bench read it. */
type Sampled = StatsMessage & { at: number };

/**
 * Every distinct stats message (the worker posts them at 1 Hz) until `done`. A new message is told
 * by the frames received from the peer, since the muted receiver may send nothing.
 */
async function sampleUntil(page: Page, done: { value: boolean }): Promise<Sampled[]> {
  const all: Sampled[] = [];
  while (!done.value) {
    const s = await stats(page);
    const prev = all[all.length - 1];
    if (s && (!prev || s.peers[0]?.received !== prev.peers[0]?.received)) all.push({ ...s, at: Date.now() });
    await page.waitForTimeout(250);
  }
  return all;
}

function round1(x: number | null): number | null {
  return x === null ? null : Math.round(x * 10) / 10;
}
