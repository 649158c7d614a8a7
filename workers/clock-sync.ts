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
// most δ / 2. So the estimate keeps only the exchanges with the shortest round trips of the last
// minute (a busy worker or a queued channel adds delay to one direction, and shows as a long δ),
// fits a line through their offsets (the slope is the drift between the two clocks), and states
// the error as half the shortest round trip plus the fit's scatter.

/** Exchanges kept per peer: 64 s at 4 per second. */
const CAPACITY = 256;
/** Only the last minute counts (drift changes with temperature; a peer's clock may be stepped). */
const WINDOW_MS = 60_000;
/** Exchanges whose round trip is within this of the shortest one are used (ms, and × the shortest). */
const DELAY_MARGIN_MS = 0.25;
const DELAY_MARGIN_RATIO = 0.5;
/** A line (drift) is fitted once the used exchanges span this long; before, their median offset. */
const FIT_SPAN_MS = 3_000;
const FIT_MIN_SAMPLES = 6;
/** A round trip above this is not a clock exchange worth keeping (a stalled tab, a queued channel). */
const MAX_DELAY_MS = 500;

export interface ClockEstimate {
  /** The peer's clock minus ours at `atMs` (our clock), ms. */
  offsetMs: number;
  /** How fast the peer's clock runs against ours, ppm (+: faster); 0 before FIT_SPAN_MS of them. */
  driftPpm: number;
  /** Bound on |offset error|: half the shortest round trip plus the scatter of the exchanges used, ms. */
  errorMs: number;
  /** Exchanges in the window, and how many the estimate used. */
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
  /** Scratch for the median (no allocation per estimate). */
  private readonly scratch = new Float64Array(CAPACITY);
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
    let minDelay = Infinity;
    let samples = 0;
    for (let k = 0; k < this.count; k++) {
      if (nowMs - this.at[k]! > WINDOW_MS) continue;
      samples++;
      if (this.delay[k]! < minDelay) minDelay = this.delay[k]!;
    }
    if (samples === 0) return;
    const limit = minDelay + Math.max(DELAY_MARGIN_MS, minDelay * DELAY_MARGIN_RATIO);
    // The exchanges used: their span, mean time and mean offset.
    let n = 0;
    let first = Infinity;
    let last = -Infinity;
    let sumT = 0;
    let sumO = 0;
    for (let k = 0; k < this.count; k++) {
      const t = this.at[k]!;
      if (nowMs - t > WINDOW_MS || this.delay[k]! > limit) continue;
      this.scratch[n++] = this.offset[k]!;
      if (t < first) first = t;
      if (t > last) last = t;
      sumT += t;
      sumO += this.offset[k]!;
    }
    const meanT = sumT / n;
    let slope = 0;
    let level: number;
    if (last - first >= FIT_SPAN_MS && n >= FIT_MIN_SAMPLES) {
      // Least squares through (t − meanT, offset): the line passes through the means.
      let sxx = 0;
      let sxy = 0;
      const meanO = sumO / n;
      for (let k = 0; k < this.count; k++) {
        const t = this.at[k]!;
        if (nowMs - t > WINDOW_MS || this.delay[k]! > limit) continue;
        sxx += (t - meanT) * (t - meanT);
        sxy += (t - meanT) * (this.offset[k]! - meanO);
      }
      slope = sxx > 0 ? sxy / sxx : 0;
      level = meanO;
    } else {
      const s = this.scratch.subarray(0, n).sort();
      level = n % 2 ? s[(n - 1) >> 1]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
    }
    // The scatter of the used exchanges about the estimate (rms).
    let ss = 0;
    for (let k = 0; k < this.count; k++) {
      const t = this.at[k]!;
      if (nowMs - t > WINDOW_MS || this.delay[k]! > limit) continue;
      const r = this.offset[k]! - (level + slope * (t - meanT));
      ss += r * r;
    }
    const e = this.estimate ?? (this.estimate = { offsetMs: 0, driftPpm: 0, errorMs: 0, samples: 0, used: 0, atMs: 0 });
    e.atMs = meanT;
    e.offsetMs = level;
    e.driftPpm = slope * 1e6;
    e.errorMs = minDelay / 2 + Math.sqrt(ss / n);
    e.samples = samples;
    e.used = n;
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

  /** The shared clock minus ours at our time `nowMs`, ms (null before it is known). */
  offsetAt(nowMs: number): number | null {
    const r = this.ref;
    if (r.kind === 'self') {
      this.last = r.baseMs;
      this.lastError = 0;
    } else if (r.kind === 'peer') {
      const o = r.peer.offsetAt(nowMs);
      if (o !== null) {
        this.last = o + r.baseMs;
        this.lastError = r.peer.estimate!.errorMs;
      }
    }
    return this.last;
  }

  /** The error bound of offsetAt, ms (0 as the reference; the last one through a hold). */
  get errorMs(): number | null {
    return this.lastError;
  }
}
