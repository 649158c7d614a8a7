// Network worker: the shared clock's arithmetic (issue 12, item 1). Each worker asks every peer's
// clock four times a second (twenty while a channel is new: askEveryMs) over the audio DataChannel
// (CLOCK_REQUEST / CLOCK_REPLY, PROTOCOL.md §1.8) and keeps, per peer, an estimate of the peer's
// clock minus ours: offset, drift and an error bound (PeerClock). The room follows one member's clock (src/room/shared-clock.ts says
// which); SharedClock turns our estimate of that member's clock into the shared clock's offset
// from ours. Pure: times come in as arguments; unit-tested in Node.
//
// One exchange (NTP's four stamps, all ms since the epoch on each side's own clock):
//   t1 we send the request, t2 the peer receives it, t3 the peer replies, t4 we receive the reply.
//   Forward f = t2 − t1 = θ(t1) + (the request's delay); backward b = t4 − t3 = −θ(t4) + (the
//   reply's delay), θ being the peer's clock minus ours. A delay is never below its path's least,
//   and a busy worker or a queued channel only ever adds to it, on one side at a time.
// So θ over the last minute is a line a + s·t with every forward figure above it and every
// backward figure's negative below it: a band. The estimate is the line that stays farthest from
// both edges (the largest margin m; for a slope s, the margin is half of F(s) + B(s), the least
// forward and backward figures once the slope is taken out, which is concave in s and maximised by
// golden-section search): its slope is the drift, its offset the middle of the band. It is exact
// when the two paths' least delays are equal (the same wire both ways), and its error is bounded
// by the margin (half the least round trip) however unequal they are, plus what the slopes that
// still fit the band would move it by, carried from the window's mean time to now.
// Why not the best exchange of each second, fitted by round trip: that needs both legs of one
// exchange clean at once. A loaded two-core machine (CI, three browsers) often gave seconds with
// none, and the line through them leaned by half the extra delay of the side that was busy: the
// three shared clocks 1.0–1.4 ms apart where 0.1 is usual. The band needs each edge's own clean
// moments only, wherever they fall in the minute (tests/unit/clock-sync.test.ts, "a loaded
// machine": 0.019 ms worst, where the old fit read 0.151).

/**
 * How often we ask a peer's clock: 20 times a second for the first SETTLE_MS of its channel, then
 * four. A join loads the machine (the newcomer's page, worklets and JIT start; a two-core machine
 * with three browsers had one side's leg late in nearly every exchange for the first seconds), and
 * the band's edges need a clean moment on each side: at four a second, the first figure 10 s
 * after following was 1.0–1.4 ms off in five CI runs (docs/TESTING.md), the bound shown 2.5 ms.
 * In the simulation of tests/unit/clock-sync.test.ts ("a join"), 20 a second takes the worst of
 * 150 seeds 12 s in from over 1 ms to under 0.25. Each exchange is 16 bytes out and 32 back.
 */
export const ASK_EVERY_MS = 250;
export const ASK_FAST_EVERY_MS = 50;
export const SETTLE_MS = 30_000;
/** The interval to our next request to a peer first asked `sinceFirstMs` ago. */
export function askEveryMs(sinceFirstMs: number): number {
  return sinceFirstMs < SETTLE_MS ? ASK_FAST_EVERY_MS : ASK_EVERY_MS;
}

/** Exchanges kept per peer: the window's worst case, 30 s at 20 a second and 34 s at 4, with room. */
const CAPACITY = 1024;
/** Only the last minute counts (drift changes with temperature; a peer's clock may be stepped). */
const WINDOW_MS = 60_000;
/** A line (drift) is fitted once the exchanges used span this long; before, the band's middle with no drift. */
const FIT_SPAN_MS = 1_000;
const FIT_MIN_SAMPLES = 4;
/** The slopes searched, ±: far beyond any crystal's drift (test switches skew by 300 ppm), as a fraction. */
const MAX_SLOPE = 5e-3;
/** Golden-section steps: the search interval shrinks to 2·MAX_SLOPE·0.618^32, about 2e-9 (0.002 ppm: 0.06 µs over 30 s). */
const SEARCH_STEPS = 32;
/** Bisection steps for the edges of the slopes that still fit the band. */
const EDGE_STEPS = 20;
/** A round trip above this is not a clock exchange worth keeping (a stalled tab, a queued channel). */
const MAX_DELAY_MS = 500;
const GOLDEN = (Math.sqrt(5) - 1) / 2;

export interface ClockEstimate {
  /** The peer's clock minus ours at `atMs` (our clock), ms. */
  offsetMs: number;
  /** How fast the peer's clock runs against ours, ppm (+: faster); 0 before FIT_SPAN_MS of them. */
  driftPpm: number;
  /** Bound on |offset error| at the newest exchange: the band's margin, plus the slopes that still fit it carried to then, ms. */
  errorMs: number;
  /** Exchanges in the window (all of them shape the band). */
  samples: number;
  used: number;
  /** Our clock at the estimate's reference point (the window's mean time). */
  atMs: number;
}

/**
 * The test build's check of the shared clock (net.worker.ts clockCheck): the shared clock and our
 * own clock each minus the machine's, ms, and per peer (by id) our estimate of its clock minus
 * ours, with what the estimate rested on.
 */
export interface ClockCheck {
  sharedMinusHostMs: number | null;
  ownMinusHostMs: number;
  peers: Record<string, number | null>;
  estimates: Record<string, { errorMs: number; driftPpm: number; samples: number; spanS: number; anchorAgeS: number } | null>;
}

/** One peer's clock, seen from ours: a window of exchanges and the estimate drawn from them. */
export class PeerClock {
  /** Per exchange: t1 and the forward figure t2 − t1; t4 and the backward figure t4 − t3. */
  private readonly t1 = new Float64Array(CAPACITY);
  private readonly fwd = new Float64Array(CAPACITY);
  private readonly t4 = new Float64Array(CAPACITY);
  private readonly back = new Float64Array(CAPACITY);
  private count = 0;
  private head = 0;
  /** The window's exchanges for one update, times relative to its mean: scratch, no allocation per estimate. */
  private readonly x1 = new Float64Array(CAPACITY);
  private readonly y1 = new Float64Array(CAPACITY);
  private readonly x4 = new Float64Array(CAPACITY);
  private readonly y4 = new Float64Array(CAPACITY);
  private n = 0;
  /** The latest estimate, or null before the first exchange. */
  estimate: ClockEstimate | null = null;

  /** One exchange's four stamps (see the head of this file). Returns false if it was not kept. */
  add(t1: number, t2: number, t3: number, t4: number): boolean {
    const delay = t4 - t1 - (t3 - t2);
    if (!(delay >= 0 && delay <= MAX_DELAY_MS) || !(t3 >= t2) || !(t4 >= t1)) return false;
    this.t1[this.head] = t1;
    this.fwd[this.head] = t2 - t1;
    this.t4[this.head] = t4;
    this.back[this.head] = t4 - t3;
    this.head = (this.head + 1) % CAPACITY;
    if (this.count < CAPACITY) this.count++;
    this.update(t4);
    return true;
  }

  /** Our clock from the oldest exchange kept to the newest, ms (0 before two). */
  spanMs(): number {
    if (this.count < 2) return 0;
    const oldest = (this.head - this.count + CAPACITY) % CAPACITY;
    return this.t4[(this.head - 1 + CAPACITY) % CAPACITY]! - this.t1[oldest]!;
  }

  /** The peer's clock minus ours at our time `nowMs`, from the latest estimate (null before one). */
  offsetAt(nowMs: number): number | null {
    const e = this.estimate;
    return e ? e.offsetMs + (e.driftPpm * 1e-6) * (nowMs - e.atMs) : null;
  }

  private update(nowMs: number): void {
    // The window's exchanges, and the time the line is anchored at: their mean.
    let n = 0;
    let sumT = 0;
    let first = Infinity;
    let last = -Infinity;
    for (let j = 0; j < this.count; j++) {
      const k = (this.head - this.count + j + CAPACITY) % CAPACITY;
      if (nowMs - this.t4[k]! > WINDOW_MS) continue;
      this.x1[n] = this.t1[k]!;
      this.y1[n] = this.fwd[k]!;
      this.x4[n] = this.t4[k]!;
      this.y4[n] = this.back[k]!;
      n++;
      sumT += this.t1[k]! + this.t4[k]!;
      first = Math.min(first, this.t1[k]!);
      last = Math.max(last, this.t4[k]!);
    }
    if (n === 0) return;
    this.n = n;
    const at = sumT / (2 * n);
    for (let i = 0; i < n; i++) {
      this.x1[i] = this.x1[i]! - at;
      this.x4[i] = this.x4[i]! - at;
    }
    let slope = 0;
    let spread = 0;
    if (last - first >= FIT_SPAN_MS && n >= FIT_MIN_SAMPLES) {
      // The widest margin: M(s) is concave (a sum of minima of lines), so golden-section search finds it.
      let lo = -MAX_SLOPE;
      let hi = MAX_SLOPE;
      let a = hi - GOLDEN * (hi - lo);
      let c = lo + GOLDEN * (hi - lo);
      let ma = this.margin(a);
      let mc = this.margin(c);
      for (let step = 0; step < SEARCH_STEPS; step++) {
        if (ma < mc) {
          lo = a;
          a = c;
          ma = mc;
          c = lo + GOLDEN * (hi - lo);
          mc = this.margin(c);
        } else {
          hi = c;
          c = a;
          mc = ma;
          a = hi - GOLDEN * (hi - lo);
          ma = this.margin(a);
        }
      }
      slope = (lo + hi) / 2;
      // The slopes that still fit the band (margin ≥ 0) on either side: how far the drift may be off.
      if (this.margin(slope) > 0) spread = Math.max(slope - this.edge(slope, -MAX_SLOPE), this.edge(slope, MAX_SLOPE) - slope);
    }
    const f = this.leastForward(slope);
    const b = this.leastBackward(slope);
    const e = this.estimate ?? (this.estimate = { offsetMs: 0, driftPpm: 0, errorMs: 0, samples: 0, used: 0, atMs: 0 });
    e.atMs = at;
    e.offsetMs = (f - b) / 2;
    e.driftPpm = slope * 1e6;
    // A negative margin (no line fits: a clock stepped, or its rate changed within the minute) is an error as large.
    e.errorMs = Math.abs(f + b) / 2 + spread * Math.abs(nowMs - at);
    e.samples = n;
    e.used = n;
  }

  /** The least forward figure with the slope `s` taken out (the band's upper edge at the mean time). */
  private leastForward(s: number): number {
    let m = Infinity;
    for (let i = 0; i < this.n; i++) m = Math.min(m, this.y1[i]! - s * this.x1[i]!);
    return m;
  }

  /** The least backward figure with the slope `s` put back (minus the band's lower edge at the mean time). */
  private leastBackward(s: number): number {
    let m = Infinity;
    for (let i = 0; i < this.n; i++) m = Math.min(m, this.y4[i]! + s * this.x4[i]!);
    return m;
  }

  /** Twice the band's margin for a line of slope `s`: concave in s. */
  private margin(s: number): number {
    return this.leastForward(s) + this.leastBackward(s);
  }

  /** From `from` (margin > 0) toward `limit`, the slope where the margin reaches 0 (or `limit`). */
  private edge(from: number, limit: number): number {
    if (this.margin(limit) >= 0) return limit;
    let inside = from;
    let outside = limit;
    for (let step = 0; step < EDGE_STEPS; step++) {
      const mid = (inside + outside) / 2;
      if (this.margin(mid) >= 0) inside = mid;
      else outside = mid;
    }
    return inside;
  }
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
