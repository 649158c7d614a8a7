// Page (main thread): one device's side of a lesson room's teacher authority. Keeps the newest
// lesson state this device has verified (src/room/lesson-authority.ts) from the room's `lesson`
// map, ignores and logs every other value written there (and writes the newest it knows back),
// and, on the teacher's device, signs the teacher's commands. The session applies the state: who
// has audio links, who is muted, the mix the teacher set (src/room/session.ts). No DOM, no audio.

import type * as Y from 'yjs';
import {
  LESSON_STATE, applyCommand, compareLesson, firstLesson, handOver, lessonRoomName, signLesson, standingOf, teacherKeyOf, verifyLesson,
  type LessonCommand, type LessonKey, type LessonState, type Rejected, type Standing, type VerifiedLesson,
} from './lesson-authority.ts';
import { writerOf } from './room.ts';

/** How the lesson looks from this device. */
export interface LessonView {
  /** The newest verified state, or null before one (the teacher has not been here yet). */
  state: LessonState | null;
  /** This device holds the teacher key now. */
  teacher: boolean;
  /** Where this device stands (null: no state yet; everyone waits). */
  standing: Standing | null;
}

export class Lesson {
  private known: VerifiedLesson | null = null;
  /** Checks run one after another (verification is async; the map may change meanwhile). */
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly room: string,
    private readonly map: Y.Map<unknown>,
    private readonly selfId: number,
    /** This device's key for the room (the teacher's, or a student's the role may be handed to). */
    readonly key: LessonKey,
    private readonly onChange: () => void,
    /** A value written to the lesson state was ignored: why, and the client id that wrote it. */
    private readonly onRejected: (why: Rejected | 'older' | 'fork', by: number | undefined) => void,
  ) {
    map.observe(this.onMap);
  }

  /** After the room's local copy is loaded: take what is there; a teacher's device says it is here. */
  async start(): Promise<void> {
    this.check();
    await this.queue;
    await this.teacherHere();
  }

  close(): void {
    this.closed = true;
    this.map.unobserve(this.onMap);
  }

  get view(): LessonView {
    const s = this.known?.state ?? null;
    return { state: s, teacher: this.isTeacher, standing: s ? standingOf(s, this.selfId) : null };
  }

  /** This device signs the next state: it holds the key at the end of the chain. */
  get isTeacher(): boolean {
    return this.known !== null && teacherKeyOf(this.known.signed) === this.key.pub;
  }

  /** The teacher's command, signed and written to the room (throws on any other device). */
  async command(c: LessonCommand): Promise<void> {
    const k = this.known;
    if (!k || !this.isTeacher) throw new Error('Only the teacher can do that.');
    await this.write(await signLesson(this.key, applyCommand(k.state, c), k.signed));
  }

  /** Hand the teacher role to client `id`, whose device published public key `pub`. */
  async handOver(id: number, pub: string): Promise<void> {
    const k = this.known;
    if (!k || !this.isTeacher) throw new Error('Only the teacher can hand the role over.');
    if (id === this.selfId) throw new Error('You are already the teacher.');
    await this.write(await handOver(this.key, applyCommand(k.state, { kind: 'hand-over', id }), k.signed, pub));
  }

  private readonly onMap = (ev: Y.YMapEvent<unknown>): void => {
    if (ev.keysChanged.has(LESSON_STATE)) this.check();
  };

  /** Verify what the map holds now (in order with earlier checks). */
  private check(): void {
    const raw = this.map.get(LESSON_STATE);
    const by = writerOf(this.map, LESSON_STATE);
    this.queue = this.queue.then(async () => {
      if (this.closed) return;
      if (raw === undefined) {
        if (this.known) this.restore();
        return;
      }
      const v = await verifyLesson(this.room, raw);
      if (this.closed) return;
      if ('rejected' in v) {
        this.onRejected(v.rejected, by);
        this.restore();
        return;
      }
      const cmp = compareLesson(this.known, v);
      if (cmp === 'newer') {
        this.known = v;
        this.onChange();
        // Our key signs, but the state names another client id as the teacher (we rejoined, and
        // a newer state than our own copy's came from the others): say where the teacher is now.
        if (this.isTeacher && v.state.teacher !== this.selfId) void this.teacherHere();
      } else if (cmp !== 'same') {
        this.onRejected(cmp, by);
        this.restore();
      }
    });
  }

  /** Put the newest state this device verified back in the room (it is signed: any device may). */
  private restore(): void {
    const k = this.known;
    if (!k || this.closed) return;
    const cur = this.map.get(LESSON_STATE) as { body?: unknown } | undefined;
    if (cur?.body === k.signed.body) return;
    this.map.set(LESSON_STATE, { ...k.signed, handovers: k.signed.handovers.map((h) => ({ ...h })) });
  }

  /** On the teacher's device: start the lesson (the room's first state), or say the teacher is here under this client id. */
  private async teacherHere(): Promise<void> {
    if (this.closed) return;
    const k = this.known;
    if (!k) {
      if ((await lessonRoomName(this.key.pub)) !== this.room) return;
      await this.write(await signLesson(this.key, firstLesson(this.room, this.selfId), null));
    } else if (this.isTeacher && k.state.teacher !== this.selfId) {
      await this.command({ kind: 'teacher-here', id: this.selfId });
    }
  }

  private async write(s: Awaited<ReturnType<typeof signLesson>>): Promise<void> {
    if (this.closed) return;
    this.map.set(LESSON_STATE, s);
    // The map's observer verifies it like anyone else's (and takes it as the newest).
  }
}
