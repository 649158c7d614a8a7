// Pure: the room's connections at a glance (issue 12). Each participant publishes how they hear
// every peer (MemberState.quality, src/room/quality-summary.ts); a pair's light is the worse of its
// two directions, judged on the glitches a listener hears (late, lost, underrun, trimmed) with the
// quality label's limits (src/ui/quality.ts: under 0.5 % Good, under 2 % Fair). The same on every
// member's view: it is computed from the room's awareness alone. Unit-tested.

import { QUANTUM_MS } from '../shared/constants.ts';
import type { MemberState } from '../shared/signaling-protocol.ts';
import { QUALITY_TIERS } from './quality.ts';

export type Light = 'green' | 'amber' | 'red' | 'unknown';

/** Glitch % at which a direction turns amber, then red: the Good and Fair tiers' limits. */
export const AMBER_PERCENT = QUALITY_TIERS[1]!.dropPercent;
export const RED_PERCENT = QUALITY_TIERS[2]!.dropPercent;

export interface PairLight {
  a: number;
  b: number;
  names: [string, string];
  light: Light;
  /** One line per direction (or what is missing), for hover and tap. */
  reasons: string[];
}

export interface MemberNote {
  id: number;
  name: string;
  /** Input level and clipping, and the depth in use; null before the member's first summary. */
  text: string | null;
  clipping: boolean;
}

const RANK: Record<Light, number> = { unknown: 0, green: 1, amber: 2, red: 3 };

function lightOf(percent: number): Light {
  return percent >= RED_PERCENT ? 'red' : percent >= AMBER_PERCENT ? 'amber' : 'green';
}

/** Every pair of participants in the roster, by client id, with its light and reasons. */
export function pairLights(roster: ReadonlyMap<number, MemberState>): PairLight[] {
  const people = [...roster].filter(([, m]) => m.kind === 'participant').sort(([a], [b]) => a - b);
  const out: PairLight[] = [];
  for (let i = 0; i < people.length; i++) {
    for (let j = i + 1; j < people.length; j++) {
      const [a, ma] = people[i]!;
      const [b, mb] = people[j]!;
      let light: Light = 'unknown';
      const reasons: string[] = [];
      for (const [listener, sender, s] of [[ma, mb, b], [mb, ma, a]] as const) {
        const h = listener.quality?.heard[String(s)];
        if (!h) {
          reasons.push(`${listener.name} has not reported hearing ${sender.name} yet`);
          continue;
        }
        const d = lightOf(h.glitchPercent);
        if (RANK[d] > RANK[light]) light = d;
        reasons.push(`${listener.name} hears ${sender.name}: ${h.glitchPercent.toFixed(2)} % glitches (late, lost, underrun, trimmed) over 10 s${h.rttMs !== null ? `, round trip ${h.rttMs.toFixed(1)} ms` : ''}`);
      }
      out.push({ a, b, names: [ma.name, mb.name], light, reasons });
    }
  }
  return out;
}

/** What each participant reports of their own end: input level, clipping, depth. */
export function memberNotes(roster: ReadonlyMap<number, MemberState>): MemberNote[] {
  return [...roster]
    .filter(([, m]) => m.kind === 'participant')
    .sort(([a], [b]) => a - b)
    .map(([id, m]) => {
      const q = m.quality;
      if (!q) return { id, name: m.name, text: null, clipping: false };
      const level = q.inputDb <= -99 ? 'silent input' : `input peak ${q.inputDb.toFixed(1)} dBFS`;
      return { id, name: m.name, text: `${q.clipping ? 'input clipping · ' : ''}${level} · depth ${q.depth} (${(q.depth * QUANTUM_MS).toFixed(1)} ms)`, clipping: q.clipping };
    });
}
