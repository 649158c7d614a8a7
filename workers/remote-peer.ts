// Network worker: what it keeps for one remote peer, shared by the sender (what goes to the peer:
// its channel's backlog and what the link can afford), the receiver (what comes from it: the
// de-jitter writer, counters, pings and loopback) and the stats. Plain data; no behaviour.

import { MAX_REDUNDANCY } from '../src/shared/constants.ts';
import { REJECT_NAMES } from '../src/shared/wire.ts';
import { IfdvWindow } from './arrival-stats.ts';
import { PeerClock } from './clock-sync.ts';
import type { DepthController } from './depth-controller.ts';
import type { JitterWriter } from './jitter-writer.ts';
import { LatencyWindow } from './latency-window.ts';
import { OneWayReports } from './one-way-reports.ts';
import { SendGovernor } from './send-governor.ts';
import { SendQueue } from './send-queue.ts';
import { ShownDrift } from './shown-drift.ts';

export class RemotePeer {
  rejected = 0;
  /** Rejections per Reject code (index), reported by name in stats. */
  readonly rejectedBy = new Uint32Array(Object.keys(REJECT_NAMES).length);
  /** Added latency: capture stamp → playout (PeerStats.latencyMs). */
  readonly latency = new LatencyWindow();
  /** One-way delay: capture stamp → our speaker, from the output clock (PeerStats.oneWayMs). */
  readonly oneWay = new LatencyWindow();
  /** The same delay reported to the peer ten times a second, and the peer's report of ours (peers whose wire ≥ 4). */
  readonly oneWayReports = new OneWayReports();
  readonly ifdv = new IfdvWindow();
  /** The clock drift shown for this sender (the playout rate has its own, in the controller). */
  readonly drift = new ShownDrift();
  lastReceived = 0;
  /** The sample format of the peer's last audio packet with samples, or -1 before one came. */
  format = -1;
  bytesIn = 0;
  lastResyncs = 0;
  /** Test build only (the steer log of workers/test-tap.ts): the stall trim asked since the last steer, quanta. */
  lastTrimAsked = 0;
  /** The peer asked us to echo its audio back (peer loopback at their end). */
  echo = false;
  /** We asked the peer to echo ours, and inject a marker every second. */
  loopback = false;
  markerSeq = -1;
  markerUs = 0;
  loopbackRttMs: number | null = null;
  rttMs: number | null = null;
  pingId = 0;
  /** The peer's clock as estimated from the shared clock's exchanges (peers whose wire ≥ 3). */
  readonly clock = new PeerClock();
  /** Id of our latest clock request to this peer. */
  clockId = 0;
  /** performance.now() of our first clock request to this peer and of the latest (NaN before one). */
  clockFirstAskAt = NaN;
  clockAskedAt = NaN;
  /** When each packet to this peer was handed over: the age of its channel's backlog. */
  readonly queue = new SendQueue();
  /** Frames not sent to this peer because its channel was congested (its backlog older than MAX_QUEUE_MS). */
  sendDropped = 0;
  /** sendDropped at the last governor tick. */
  sendDroppedSeen = 0;
  /** Redundant copies this link can afford (lowered while it is congested). */
  readonly governor = new SendGovernor(performance.now());
  /** Redundant copies of earlier quanta this peer may get now (the governor's level and the room setting; at two quanta per packet it gets the pair's copy only, sender.ts copiesOf). */
  copies = MAX_REDUNDANCY;
  /** This peer gets a mono mixdown without copies, but the pair's at two quanta per packet (its link is congested even so). */
  mono = false;
  constructor(
    readonly id: string,
    readonly channel: RTCDataChannel,
    readonly writer: JitterWriter,
    readonly controller: DepthController,
    /** The highest audio wire version the peer decodes (1: PCM16 only; 2: PCM24 too). */
    readonly wire: number = 1,
  ) {}
}

/** This worker's wall clock, ms since the epoch. A figure that needs it twice takes one reading (see NetWorker.ownAt). */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Wall-clock microseconds (the packets' capture-time stamps and pings use it). */
export function nowUs(): number {
  return Math.round(nowMs() * 1000);
}
