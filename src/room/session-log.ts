// Page: the session log (issue 12, item 4): what happened in the room while this page was in it,
// for a teacher's or an ensemble's look back and for export. It is fed the room's awareness (who is
// here, their connection summaries, their depth and mix) each time it changes, and every change to
// the room's shared settings and to the remote-control requests, with the device that wrote it
// (the Yjs client id stored on the change itself, not a name the writer claims). Pure: the session
// calls it with the time; unit-tested in Node.
//
// What it records:
//   join / leave         a participant or paired remote arrives or goes (name, role, instrument)
//   light                a pair's light changes (the reasons: each direction's glitches and round trip)
//   depth                a participant's depth in use changes, or they switch manual/automatic
//   mute                 a participant mutes or unmutes themselves
//   setting              a room setting changes (redundancy, default depth, listing), and by whom
//   control              a remote-control request (someone set another's mix, depth, or recording)
//   lesson               a lesson room's teacher: who was let in, declined, muted, removed, whose
//                        mix was set, the role handed over; and every change not signed by the
//                        teacher, ignored, with the device that wrote it

import { METRONOME_KEY, parseMetronome } from '../shared/metronome.ts';
import { QUANTUM_MS } from '../shared/constants.ts';
import type { ControlRequest, MemberState } from '../shared/signaling-protocol.ts';
import type { LessonState, Rejected } from './lesson-authority.ts';
import { pairLights, type Light } from '../ui/connection-lights.ts';
import { LISTING_KEY } from './open-rooms.ts';

export type LogKind = 'join' | 'leave' | 'light' | 'depth' | 'mute' | 'setting' | 'control' | 'lesson';

export interface LogEntry {
  /** Wall-clock time, ms since the epoch. */
  atMs: number;
  kind: LogKind;
  text: string;
}

/** Entries kept (oldest dropped first): hours of a busy room. */
export const LOG_CAPACITY = 5000;

const WORD: Record<Light, string> = { green: 'clean', amber: 'some glitches', red: 'struggling', unknown: 'measuring' };

/** What the log remembers of a member between two rosters. */
interface Seen {
  name: string;
  kind: MemberState['kind'];
  muted: boolean;
  /** Depth in use (quanta) and whether automatic, once reported. */
  depth: number | null;
  adaptive: boolean | null;
}

export class SessionLog {
  readonly entries: LogEntry[] = [];
  /** Dropped from the front when over capacity (the export says so). */
  dropped = 0;
  private readonly seen = new Map<number, Seen>();
  /** Names of members who left, for attributing their late-arriving changes. */
  private readonly gone = new Map<number, string>();
  private readonly lights = new Map<string, Light>();
  private first = true;

  constructor(
    /** This page's own client id: its entries say "you". */
    private readonly selfId: number,
  ) {}

  private add(atMs: number, kind: LogKind, text: string): void {
    this.entries.push({ atMs, kind, text });
    if (this.entries.length > LOG_CAPACITY) {
      this.entries.shift();
      this.dropped++;
    }
  }

  /** The name of client `id` as the log knows it ("you" for this page). */
  nameOf(id: number): string {
    if (id === this.selfId) return 'you';
    const s = this.seen.get(id);
    if (s) return s.kind === 'remote' ? `${s.name} (remote)` : s.name;
    return this.gone.get(id) ?? `device ${id}`;
  }

  /** "your" for this page, else "<name>'s". */
  private whose(id: number): string {
    return id === this.selfId ? 'your' : `${this.nameOf(id)}'s`;
  }

  /** The room's awareness changed (or it is the first look at it). */
  roster(roster: ReadonlyMap<number, MemberState>, atMs: number): void {
    const first = this.first;
    this.first = false;
    for (const [id, m] of roster) {
      const before = this.seen.get(id);
      const q = m.quality;
      const depth = q ? q.depth : null;
      const adaptive = m.mix ? m.mix.adaptive === true : null;
      if (!before) {
        const who = m.kind === 'remote' ? `${m.name}'s phone (remote control)` : `${m.name} (${m.role}${m.instrument ? `, ${m.instrument}` : ''})`;
        this.add(atMs, 'join', id === this.selfId ? `you joined as ${who}` : `${who} ${first ? 'was here' : 'joined'}`);
        this.gone.delete(id);
      } else if (m.kind === 'participant') {
        if (before.muted !== m.muted) this.add(atMs, 'mute', `${this.nameOf(id)} ${m.muted ? 'muted' : 'unmuted'} ${id === this.selfId ? 'your' : 'their'} microphone`);
        if (depth !== null && (before.depth !== depth || (adaptive !== null && before.adaptive !== adaptive))) {
          const was = before.depth === null ? '' : ` (was ${before.depth}${before.adaptive === null ? '' : before.adaptive ? ', automatic' : ', manual'})`;
          this.add(atMs, 'depth', `${this.whose(id)} depth ${depth} quanta = ${(depth * QUANTUM_MS).toFixed(1)} ms${adaptive === null ? '' : adaptive ? ', automatic' : ', manual'}${was}`);
        }
      }
      this.seen.set(id, { name: m.name, kind: m.kind, muted: m.muted, depth: depth ?? before?.depth ?? null, adaptive: adaptive ?? before?.adaptive ?? null });
    }
    for (const [id, s] of [...this.seen]) {
      if (roster.has(id)) continue;
      this.add(atMs, 'leave', `${s.kind === 'remote' ? `${s.name}'s phone` : s.name} left`);
      this.seen.delete(id);
      this.gone.set(id, s.name);
    }
    const present = new Set<string>();
    for (const p of pairLights(roster)) {
      const key = `${p.a}:${p.b}`;
      present.add(key);
      const was = this.lights.get(key) ?? 'unknown';
      if (p.light === was) continue;
      this.lights.set(key, p.light);
      if (p.light === 'unknown') continue;
      this.add(atMs, 'light', `${p.names[0]} ↔ ${p.names[1]}: ${WORD[was]} → ${WORD[p.light]} (${p.reasons.join('; ')})`);
    }
    for (const key of [...this.lights.keys()]) if (!present.has(key)) this.lights.delete(key);
  }

  /** A room setting changed; `by`: the client id that wrote it (undefined: unknown). */
  setting(key: string, value: unknown, by: number | undefined, atMs: number): void {
    const who = by === undefined ? 'someone' : this.nameOf(by);
    const what =
      key === 'redundancy' ? `redundancy to ${value === 0 ? 'off' : `${String(value)} frame${value === 1 ? '' : 's'}`}`
      : key === 'depth' ? `the room's default depth to ${String(value)} quanta`
      : key === LISTING_KEY ? (typeof value === 'string' ? `the room listed as "${value}"` : 'the room unlisted')
      : key === METRONOME_KEY ? this.metronome(value)
      : value === undefined ? `${key} off`
      : `${key} to ${JSON.stringify(value)}`;
    this.add(atMs, 'setting', `${who} set ${what}`);
  }

  private metronome(value: unknown): string {
    const m = parseMetronome(value);
    if (!m) return 'the metronome to something it cannot play (ignored)';
    const mode = m.mode === 'leader' && m.leader !== null ? `, ${this.nameOf(m.leader)} leading` : ', together';
    return `the metronome ${m.startMs === null ? 'stopped' : 'running'}: ${m.bpm} bpm, ${m.beatsPerBar} beats a bar${m.accent ? ' accented' : ''}, ${m.countInBars} bar${m.countInBars === 1 ? '' : 's'} count-in${mode}`;
  }

  /** A control request for `target` (client id) was written by client `by`. */
  control(target: number, r: ControlRequest, by: number | undefined, atMs: number): void {
    const who = by === undefined ? 'someone' : this.nameOf(by);
    const whose = this.whose(target);
    const parts: string[] = [];
    if (r.master !== undefined) parts.push(`${whose} master volume to ${Math.round(r.master * 100)} %`);
    if (r.depth !== undefined) parts.push(`${whose} depth to ${Math.round(r.depth)} quanta`);
    if (r.peer) parts.push(`${whose} volume of ${this.nameOf(Number(r.peer.id))} to ${Math.round(r.peer.gain * 100)} %${r.peer.muted ? ', muted' : ''}`);
    if (r.record !== undefined) parts.push(`${r.record ? 'started' : 'stopped'} a take on ${whose} device`);
    if (parts.length === 0) return;
    this.add(atMs, 'control', `${who} ${r.record !== undefined && parts.length === 1 ? parts[0] : `set ${parts.join(', ')}`}`);
  }

  /** A lesson room's signed state changed from `prev` (null: none yet) to `next`. */
  lesson(prev: LessonState | null, next: LessonState | null, atMs: number): void {
    if (!next) return;
    const t = `the teacher (${this.nameOf(next.teacher)})`;
    if (!prev) {
      this.add(atMs, 'lesson', `lesson room: ${next.teacher === this.selfId ? 'you are' : `${this.nameOf(next.teacher)} is`} the teacher`);
    } else if (prev.teacher !== next.teacher) {
      this.add(atMs, 'lesson', `${next.teacher === this.selfId ? 'you are' : `${this.nameOf(next.teacher)} is`} the teacher now`);
    }
    const added = (a: number[], b: number[]): number[] => b.filter((x) => !a.includes(x));
    const p: Pick<LessonState, 'admitted' | 'muted' | 'removed' | 'mixes'> = prev ?? { admitted: [], muted: [], removed: [], mixes: {} };
    for (const id of added(p.admitted, next.admitted)) if (id !== prev?.teacher) this.add(atMs, 'lesson', `${t} let ${this.nameOf(id)} in`);
    for (const id of added(p.removed, next.removed)) this.add(atMs, 'lesson', `${t} removed ${this.nameOf(id)}`);
    for (const id of added(p.muted, next.muted)) this.add(atMs, 'lesson', `${t} muted ${this.nameOf(id)}`);
    for (const id of added(next.muted, p.muted)) this.add(atMs, 'lesson', `${t} unmuted ${this.nameOf(id)}`);
    for (const [id, m] of Object.entries(next.mixes)) {
      if (p.mixes[id]?.v === m.v) continue;
      const parts = [
        ...(m.master !== undefined ? [`output ${Math.round(m.master * 100)} %`] : []),
        ...(m.adaptive === true ? ['depth automatic'] : m.depth !== undefined ? [`depth ${m.depth} quanta`] : []),
        ...Object.entries(m.peers ?? {}).map(([peer, g]) => `${this.nameOf(Number(peer))} at ${Math.round(g.gain * 100)} %${g.muted ? ', muted' : ''}`),
      ];
      this.add(atMs, 'lesson', `${t} set ${this.whose(Number(id))} mix: ${parts.join(', ') || 'unchanged'}`);
    }
  }

  /** A change to the lesson (or to our mixer, in a lesson room) that the teacher did not sign: ignored. */
  lessonIgnored(why: Rejected | 'older' | 'fork' | 'not your remote', by: number | undefined, atMs: number): void {
    const who = by === undefined ? 'someone' : this.nameOf(by);
    const what =
      why === 'not your remote' ? `tried to change ${this.whose(this.selfId)} mixer (only your own paired remote or the teacher may)`
      : why === 'older' ? 'put back an older lesson state (a replay)'
      : why === 'fork' ? "wrote a lesson state from a teacher chain that is not this room's"
      : `wrote a lesson change not signed by the teacher (${why})`;
    this.add(atMs, 'lesson', `${who} ${what}: ignored`);
  }

  /** We took our mix back from the teacher. */
  lessonTookBack(atMs: number): void {
    this.add(atMs, 'lesson', 'you took back control of your mix');
  }

  /** The log as a text file: a heading, then one line per entry, local time first. */
  text(room: string, now = new Date()): string {
    const stamp = (ms: number): string => {
      const d = new Date(ms);
      const p = (n: number, w = 2): string => String(n).padStart(w, '0');
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
    };
    const head = [`Tutti session log: room "${room}", exported ${stamp(now.getTime())} (this device's local time)`];
    if (this.dropped) head.push(`(the ${this.dropped} oldest entries were dropped: the log keeps ${LOG_CAPACITY})`);
    return [...head, '', ...this.entries.map((e) => `${stamp(e.atMs)}  ${e.kind.padEnd(7)}  ${e.text}`), ''].join('\n');
  }
}
