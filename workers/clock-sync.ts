// Network worker: the shared clock's arithmetic (issue 12, item 1). Each worker asks every peer's
// clock four times a second over the audio DataChannel (CLOCK_REQUEST / CLOCK_REPLY, PROTOCOL.md
// §1.8) and keeps, per peer, an estimate of the peer's clock minus ours: offset, drift and an
// error bound (PeerClock). The room follows one member's clock (src/room/shared-clock.ts says
// which); SharedClock turns our estimate of that member's clock into the shared clock's offset
// from ours. Pure: times come in as arguments; unit-tested in Node.
//
// One exchange (NTP's four stamps, all ms since the epoch on each side's own clock):
//   t1 we send the request, t2 the peer receives it, t3 the peer replies, t4 we receive the reply.
//   offset θ = ((t2 − t1) + (t3 − t4)) / 2, round trip δ = (t4 − t1) − (t3 − t2).
// θ is exact when both directions take equally long; however unequal they are, its error is at
// most δ / 2. A busy worker or a queued channel adds delay to one direction and shows as a long δ.
// So the estimate takes the best (shortest δ) exchange of each second of the last minute, fits a
// line through their offsets weighted by 1/δ² (the slope is the drift between the two clocks; one
// point per second spreads them over the whole window, so a quiet moment long ago cannot decide
// the slope alone), and states the error as the weighted mean of δ / 2 plus the fit's scatter.

/** Exchanges kept per peer: 64 s at 4 per second. */
const CAPACITY = 256;
/** Only the last minute counts (drift changes with temperature; a peer's clock may be stepped). */
const WINDOW_MS = 60_000;
/** The estimate takes the best exchange of each second: evenly spread over the window, so the drift is fitted across all of it. */
const BUCKET_MS = 1000;
/** Weights are 1 / (round trip + this)², ms: a 0.1 ms and a 0.2 ms exchange count nearly alike. */
const WEIGHT_FLOOR_MS = 0.2;
/** A line (drift) is fitted once the seconds used span this long; before, their weighted mean offset. */
const FIT_SPAN_MS = 3_000;
const FIT_MIN_SAMPLES = 4;
/** A round trip above this is not a clock exchange worth keeping (a stalled tab, a queued channel). */
const MAX_DELAY_MS = 500;

export interface ClockEstimate {
  /** The peer's clock minus ours at `atMs` (our clock), ms. */
  offsetMs: number;
  /** How fast the peer's clock runs against ours, ppm (+: faster); 0 before FIT_SPAN_MS of them. */
  driftPpm: number;
  /** Bound on |offset error|: the used exchanges' (weighted) mean half round trip plus their scatter about the fit, ms. */
  errorMs: number;
  /** Exchanges in the window, and how many the estimate used (one per second). */
  samples: number;
  used: number;
  /** Our clock at the estimate's reference point. */
  atMs: number;
}

/** One peer's clock, seen from ours: a window of exchanges and the estimate drawn from them. */
export class PeerClock {
  private readonly at = new Float64Array(CAPACITY);
  private readonly offset = new Float64Array(CAPACITY);
  private readonly delay = new Float64Array(CAPACITY);
  private count = 0;
  private head = 0;
  /** The best exchange of each second (time, offset, round trip): scratch, no allocation per estimate. */
  private readonly bt = new Float64Array(CAPACITY);
  private readonly bo = new Float64Array(CAPACITY);
  private readonly bd = new Float64Array(CAPACITY);
  /** The latest estimate, or null before the first exchange. */
  estimate: ClockEstimate | null = null;

  /** One exchange's four stamps (see the head of this file). Returns false if it was not kept. */
  add(t1: number, t2: number, t3: number, t4: number): boolean {
    const delay = t4 - t1 - (t3 - t2);
    if (!(delay >= 0 && delay <= MAX_DELAY_MS) || !(t3 >= t2) || !(t4 >= t1)) return false;
    this.at[this.head] = (t1 + t4) / 2;
    this.offset[this.head] = (t2 - t1 + (t3 - t4)) / 2;
    this.delay[this.head] = delay;
    this.head = (this.head + 1) % CAPACITY;
    if (this.count < CAPACITY) this.count++;
    this.update(t4);
    return true;
  }

  /** The peer's clock minus ours at our time `nowMs`, from the latest estimate (null before one). */
  offsetAt(nowMs: number): number | null {
    const e = this.estimate;
    return e ? e.offsetMs + (e.driftPpm * 1e-6) * (nowMs - e.atMs) : null;
  }

  private update(nowMs: number): void {
    // The best (shortest round trip) exchange of each second of the window, oldest first.
    let n = 0;
    let samples = 0;
    let bucket = NaN;
    for (let j = 0; j < this.count; j++) {
      const k = (this.head - this.count + j + CAPACITY) % CAPACITY;
      const t = this.at[k]!;
      if (nowMs - t > WINDOW_MS) continue;
      samples++;
      const b = Math.floor(t / BUCKET_MS);
      if (b !== bucket) {
        bucket = b;
        this.bt[n] = t;
        this.bo[n] = this.offset[k]!;
        this.bd[n] = this.delay[k]!;
        n++;
      } else if (this.delay[k]! < this.bd[n - 1]!) {
        this.bt[n - 1] = t;
        this.bo[n - 1] = this.offset[k]!;
        this.bd[n - 1] = this.delay[k]!;
      }
    }
    if (n === 0) return;
    // Weighted by the round trip: an exchange's offset can be off by up to half of it.
    let sw = 0;
    let st = 0;
    let so = 0;
    let sd = 0;
    for (let i = 0; i < n; i++) {
      const w = weight(this.bd[i]!);
      sw += w;
      st += w * this.bt[i]!;
      so += w * this.bo[i]!;
      sd += w * this.bd[i]!;
    }
    const meanT = st / sw;
    const meanO = so / sw;
    let slope = 0;
    if (this.bt[n - 1]! - this.bt[0]! >= FIT_SPAN_MS && n >= FIT_MIN_SAMPLES) {
      let sxx = 0;
      let sxy = 0;
      for (let i = 0; i < n; i++) {
        const w = weight(this.bd[i]!);
        const dt = this.bt[i]! - meanT;
        sxx += w * dt * dt;
        sxy += w * dt * (this.bo[i]! - meanO);
      }
      slope = sxx > 0 ? sxy / sxx : 0;
    }
    let ss = 0;
    for (let i = 0; i < n; i++) {
      const r = this.bo[i]! - (meanO + slope * (this.bt[i]! - meanT));
      ss += weight(this.bd[i]!) * r * r;
    }
    const e = this.estimate ?? (this.estimate = { offsetMs: 0, driftPpm: 0, errorMs: 0, samples: 0, used: 0, atMs: 0 });
    e.atMs = meanT;
    e.offsetMs = meanO;
    e.driftPpm = slope * 1e6;
    e.errorMs = sd / sw / 2 + Math.sqrt(ss / sw);
    e.samples = samples;
    e.used = n;
  }
}

/** How much an exchange with round trip `delay` (ms) counts in the fit: the shorter, the more. */
function weight(delay: number): number {
  const d = delay + WEIGHT_FLOOR_MS;
  return 1 / (d * d);
}

/**
 * Which clock the room follows, as the page tells the worker: our own (we are the reference), a
 * peer's, or none for now (the reference left and its successor has not yet said so: hold the
 * last offset). `baseMs` is the reference's published base: shared clock = its clock + baseMs.
 */
export type ClockReference = { kind: 'self'; baseMs: number } | { kind: 'peer'; peer: PeerClock; baseMs: number } | { kind: 'hold' };

/** The shared clock, from our side: shared = our clock + offsetMs. */
export class SharedClock {
  ref: ClockReference = { kind: 'hold' };
  /** The last offset computed (kept through a hold), or null before any. */
  private last: number | null = null;
  private lastError: number | null = null;
  /**
   * The peer reference last followed and its base, kept through a hold: the shared clock runs on
   * at that clock's estimated rate, so every follower holds the same timeline (frozen, each would
   * run at its own clock's rate: a follower whose clock is 300 ppm fast, taking over after a 13 s
   * hold, stepped the others' shared clock by 3.8 ms).
   */
  private heldPeer: PeerClock | null = null;
  private heldBase = 0;

  /** The shared clock minus ours at our time `nowMs`, ms (null before it is known). */
  offsetAt(nowMs: number): number | null {
    const r = this.ref;
    if (r.kind === 'self') {
      this.last = r.baseMs;
      this.lastError = 0;
      this.heldPeer = null;
    } else if (r.kind === 'peer' && r.peer.estimate) {
      this.heldPeer = r.peer;
      this.heldBase = r.baseMs;
      this.last = r.peer.offsetAt(nowMs)! + r.baseMs;
      this.lastError = r.peer.estimate.errorMs;
    } else if (this.heldPeer) {
      // A hold, or a reference whose clock has no estimate yet (a new channel to it, after the old
      // one closed: its PeerClock starts empty): run on at the clock last followed. (Frozen
      // instead, the shared clock ran at our own rate: a follower 300 ppm fast whose channel to
      // the departed reference was re-offered held frozen for 6 s and took over 1.8 ms ahead.)
      this.last = this.heldPeer.offsetAt(nowMs)! + this.heldBase;
    }
    return this.last;
  }

  /** The error bound of offsetAt, ms (0 as the reference; the last one through a hold). */
  get errorMs(): number | null {
    return this.lastError;
  }
}
