// Network worker: the one-way reports exchanged with one peer on the audio channel (PROTOCOL.md
// §1.8b, ControlKind.ONE_WAY). Our side: the one-way delay of each of the peer's packets (capture
// stamp → our speaker, as the receiver measures it for PeerStats.oneWayMs), and at each report the
// median of those since the last one. Their side: the latest report the peer sent of ours, and
// when it came. Leader mode advances a member's clicks by the leader's report (§12c): through the
// room's awareness that figure is a second's median and comes a second or more after a change of
// the leader's playout (a stall, a depth change); on the audio channel, within about 0.1 s.
// Fixed storage; no allocation per packet.

/** Samples kept between two reports: 0.1 s holds ~38 packets; a stalled timer leaves more (the newest are kept). */
const CAPACITY = 256;
/** Fewer packets than this since the last report: too few for a median; no report. */
const MIN_SAMPLES = 8;
/** A report older than this is not used (the peer stopped sending them, or its channel stalls). */
export const ONE_WAY_FRESH_MS = 1_000;

export class OneWayReports {
  private readonly samples = new Float64Array(CAPACITY);
  private count = 0;
  /** Id of our last report to the peer. */
  sentId = 0;
  /** The peer's latest report of our audio (ms), its id, and when it came (performance.now ms); null before one. */
  private theirsMs: number | null = null;
  private theirsId = 0;
  private theirsAt = -Infinity;

  /** One of the peer's packets: its one-way delay, ms. */
  add(ms: number): void {
    this.samples[this.count % CAPACITY] = ms;
    this.count++;
  }

  /** The median of the samples since the last call (ms), or null when too few came; starts a new report. */
  take(): number | null {
    const n = Math.min(this.count, CAPACITY);
    this.count = 0;
    if (n < MIN_SAMPLES) return null;
    const s = this.samples.subarray(0, n).sort();
    return n % 2 === 1 ? s[n >> 1]! : (s[(n >> 1) - 1]! + s[n >> 1]!) / 2;
  }

  /** A report from the peer (its id and figure, ms) came at `nowMs`: kept unless a newer one already came (the channel is unordered). */
  received(id: number, ms: number, nowMs: number): void {
    if (this.theirsMs !== null && ((id - this.theirsId) | 0) <= 0) return;
    if (!(ms >= 0 && ms <= 10_000)) return; // not a delay any link of ours has: ignore it
    this.theirsMs = ms;
    this.theirsId = id;
    this.theirsAt = nowMs;
  }

  /** The peer's report of our one-way delay to its speaker (ms) if it came within ONE_WAY_FRESH_MS of `nowMs`, else null. */
  theirs(nowMs: number): number | null {
    return nowMs - this.theirsAt <= ONE_WAY_FRESH_MS ? this.theirsMs : null;
  }
}
