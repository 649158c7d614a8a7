// Network worker: the once-a-second figures of one remote peer (PeerStats, shown in the room view
// and read by the tests and the bench), assembled from its writer's and the worklet's counters, its
// depth controller, and the sender's record of its link. Resets the per-second windows it reads.

import { PEER_I32 } from '../src/shared/memory-layout.ts';
import { REJECT_NAMES, SampleFormat, VERSION_PCM24, bitsOfFormat, type Reject } from '../src/shared/wire.ts';
import type { PeerStats } from '../src/shared/worker-protocol.ts';
import type { RemotePeer } from './remote-peer.ts';
import type { OutputClock } from './shown-drift.ts';

/**
 * `seconds` since the last call; `stereoSender`: we send two channels (a mono mixdown for this
 * peer is then a step down the ladder, worth reporting); `sendFormat`: the format we chose; `output`: our output device's clock (the
 * drift shown is against it); `clockNow`: our clock for the shared clock's exchanges.
 */
export function takePeerStats(p: RemotePeer, seconds: number, stereoSender: boolean, sendFormat: SampleFormat, output: OutputClock, clockNow: number): PeerStats {
  const w = p.writer;
  const c = w.counters;
  // Missed: the worklet's slots with no frame, and those a resync passed over (jitter-writer.ts).
  const missed = w.playCounter(PEER_I32.MISSED) + c.resyncMissed;
  const lost = Math.max(0, missed - c.late);
  const expected = Math.max(1, c.received + c.recovered + c.late + lost);
  const pct = (n: number) => Math.round((n / expected) * 100_000) / 1000;
  const fill = p.controller.fill(23); // ≈ the last second of 43 ms windows
  const drift = p.drift.shown(output);
  const stats: PeerStats = {
    peerId: p.id,
    slot: w.peer,
    channelState: p.channel.readyState,
    received: c.received,
    late: c.late,
    // A missed playout slot is either a frame that came late or one that never came.
    // (Stragglers of a replaced stream are counted `stale`, not late, so they do not hide losses.)
    lost,
    stale: c.stale,
    duplicates: c.duplicates,
    rejected: p.rejected,
    rejectedBy: Object.fromEntries([...p.rejectedBy].flatMap((n, code) => (n > 0 ? [[REJECT_NAMES[code as Reject], n]] : []))),
    resyncs: c.resyncs,
    played: w.playCounter(PEER_I32.PLAYED),
    missed,
    concealed: w.playCounter(PEER_I32.CONCEALED),
    recovered: c.recovered,
    underruns: w.playCounter(PEER_I32.UNDERRUNS),
    // Quanta a trim skipped, and frames that had come but a resync passed over (those that never
    // came are in `missed`, so `lost`). (A trim's skipped slots are all counted trimmed: one whose
    // frame has not come yet may still come, as a copy in a later packet, which nothing counts.)
    trimmed: w.playCounter(PEER_I32.TRIMMED) + c.resyncDiscarded,
    depth: p.controller.target,
    fill: { avg: round2(fill.avg), min: round2(fill.min), held: round2(p.controller.held()), target: p.controller.target, relief: round2(p.controller.relief()) },
    percent: { late: pct(c.late), lost: pct(lost), duplicates: pct(c.duplicates), rejected: pct(p.rejected) },
    rttMs: p.rttMs,
    ifdvMs: p.ifdv.summary(),
    kbpsIn: Math.round((p.bytesIn * 8) / seconds / 1000),
    driftPpm: drift.ppm,
    driftSeconds: drift.seconds,
    rate: Math.round(p.controller.rate * 1e6) / 1e6,
    bufferedAmount: p.channel.readyState === 'open' ? p.channel.bufferedAmount : 0,
    sendDropped: p.sendDropped,
    sendRedundancy: p.copies,
    sendMono: p.mono && stereoSender,
    sendBits: sendFormat === SampleFormat.PCM24 && p.wire >= VERSION_PCM24 && !(p.mono && stereoSender) ? 24 : 16,
    bits: p.format < 0 ? null : bitsOfFormat(p.format as SampleFormat),
    loopbackRttMs: p.loopback ? p.loopbackRttMs : null,
    latencyMs: p.latency.summary(),
    oneWayMs: p.oneWay.summary(),
    framesPerSecond: Math.round((c.received + c.recovered - p.lastReceived) / seconds),
    clock: clockStats(p, clockNow),
  };
  p.lastReceived = c.received + c.recovered;
  p.bytesIn = 0;
  p.latency.reset();
  p.oneWay.reset();
  p.ifdv.reset();
  return stats;
}

function clockStats(p: RemotePeer, now: number): PeerStats['clock'] {
  const e = p.clock.estimate;
  const offset = p.clock.offsetAt(now);
  if (!e || offset === null) return null;
  return { offsetMs: round3(offset), driftPpm: Math.round(e.driftPpm * 10) / 10, errorMs: round3(e.errorMs), used: e.used, samples: e.samples };
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
