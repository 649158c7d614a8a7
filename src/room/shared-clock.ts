// Page: whose clock the room follows (issue 12, item 1). Every participant's network worker
// estimates every peer's clock (workers/clock-sync.ts); the room agrees on one member whose clock,
// plus a base it publishes, is the shared clock. Each participant publishes the timeline it follows
// (MemberState.clock) and this decides, from the roster alone, what to follow and what to tell the
// worker. Pure; unit-tested in Node.
//
// The rules (every member applies them to the same roster, so they agree):
//   - A timeline is (reference, origin): origin is when it began, on the shared clock. A timeline
//     counts while its reference is present and says it is the reference (ref = itself).
//   - Follow the oldest counting timeline (smallest origin; then the smallest reference id). So a
//     newcomer, who starts a timeline of its own while it is alone, joins the room's on arrival,
//     and two groups that meet agree on the older one.
//   - Nobody present is a counting reference (ours left): its followers' lowest client id takes
//     over, keeping the origin. (Its followers: every participant on that timeline, whether it
//     still names the departed reference or already holds for the successor.) Its worker fixes the base at that instant (the shared clock it
//     held minus its own clock: clock-ref `succeed`, answered by `clock-base`) and only then does
//     it publish itself as the reference with that base, so the shared clock runs on with no step
//     (within the error of its last estimate). Until it says so, the others hold, running on at
//     the departed clock's rate.
//   - With no timeline anywhere: start one, as its reference, at base 0; but not in the first
//     seconds after joining (`mayStart` false), while the room's awareness may still be on its
//     way: a newcomer's own timeline could otherwise look older than the room's (its clock may be
//     behind) and pull everyone onto it.

import type { ClockRefMessage } from '../shared/worker-protocol.ts';
import type { ClockState, MemberState } from '../shared/signaling-protocol.ts';

export interface ClockDecision {
  /** What to publish as our MemberState.clock. */
  state: ClockState;
  /** What to tell our network worker. */
  ref: ClockRefMessage['ref'];
}

/** The base our worker fixed when we took over the timeline that began at `origin` (clock-base). */
export interface TakenBase {
  origin: number;
  baseMs: number;
}

/**
 * `mine`: what we publish now (null before the first decision); `taken`: the base our worker fixed
 * when we last took a timeline over (null before); `nowMs`: our clock; `mayStart`: we may start a
 * timeline of our own. Null: nothing to follow yet (publish nothing, hold).
 */
export function decideClock(selfId: number, roster: ReadonlyMap<number, MemberState>, mine: ClockState | null, taken: TakenBase | null, nowMs: number, mayStart: boolean): ClockDecision | null {
  const stateOf = (id: number): ClockState | null | undefined => (id === selfId ? mine : roster.get(id)?.clock);
  // The counting timelines: a present participant who says it is its own reference.
  let best: { ref: number; origin: number; baseMs: number } | null = null;
  for (const [id, m] of roster) {
    const c = stateOf(id);
    if (m.kind !== 'participant' || !c || c.ref !== id) continue;
    if (!best || c.origin < best.origin || (c.origin === best.origin && id < best.ref)) best = { ref: id, origin: c.origin, baseMs: c.base };
  }
  if (best) {
    if (best.ref === selfId) return { state: mine!, ref: { kind: 'self', baseMs: mine!.base } };
    return { state: { ref: best.ref, origin: best.origin, base: 0 }, ref: { kind: 'peer', peerId: String(best.ref), baseMs: best.baseMs } };
  }
  if (mine) {
    // Our reference is gone (or not yet confirmed): its followers' lowest id takes over. Its
    // followers are everyone on the timeline (its origin), whomever they name now: one still
    // naming the departed reference, and one already holding for the successor, must count the
    // same set, or the holder, not finding the successor among those naming it, took over too.
    const followers = [...roster].filter(([id, m]) => m.kind === 'participant' && stateOf(id)?.origin === mine.origin).map(([id]) => id);
    if (!followers.includes(selfId)) followers.push(selfId);
    const successor = Math.min(...followers);
    if (successor === selfId) {
      // Publish ourselves only with the base our worker fixed; until it answers, keep our state.
      if (taken?.origin !== mine.origin) return { state: mine, ref: { kind: 'succeed' } };
      return { state: { ref: selfId, origin: mine.origin, base: taken.baseMs }, ref: { kind: 'self', baseMs: taken.baseMs } };
    }
    return { state: { ref: successor, origin: mine.origin, base: 0 }, ref: { kind: 'hold' } };
  }
  if (!mayStart) return null;
  return { state: { ref: selfId, origin: nowMs, base: 0 }, ref: { kind: 'self', baseMs: 0 } };
}
