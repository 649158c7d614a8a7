// Page: the shared clock in words, for the room view (issue 12, item 1): whose clock the room
// follows, and how far off ours may be from it (the error bound the network worker states). Pure.

import type { MemberState } from '../shared/signaling-protocol.ts';
import type { SharedClockStats, PeerStats } from '../shared/worker-protocol.ts';

export interface ClockLabel {
  /** 'self' | 'peer' | 'hold' | 'none': the test and the style read it. */
  state: string;
  text: string;
  /** The detail on hover: each peer's clock against ours. */
  title: string;
}

export function clockLabel(clock: SharedClockStats | undefined, peers: readonly PeerStats[], roster: ReadonlyMap<number, MemberState>): ClockLabel {
  const name = (peerId: string | null): string => (peerId !== null ? roster.get(Number(peerId))?.name : undefined) ?? 'a participant';
  const detail = peers
    .filter((p) => p.clock)
    .map((p) => `${name(p.peerId)}: ${signed(p.clock!.offsetMs, 2)} ms from yours ± ${p.clock!.errorMs.toFixed(2)}, drift ${signed(p.clock!.driftPpm, 1)} ppm`)
    .join('\n');
  if (!clock || clock.offsetMs === null) return { state: 'none', text: 'Shared clock: measuring…', title: detail };
  if (clock.ref === 'self') return { state: 'self', text: 'Shared clock: yours (the room follows this device)', title: detail };
  if (clock.ref === 'hold') return { state: 'hold', text: `Shared clock: handing over (running on; ± ${clock.errorMs?.toFixed(2) ?? '?'} ms)`, title: detail };
  return { state: 'peer', text: `Shared clock: ${name(clock.refPeerId)}'s, yours within ± ${clock.errorMs!.toFixed(2)} ms`, title: detail };
}

function signed(x: number, digits: number): string {
  return `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(digits)}`;
}
