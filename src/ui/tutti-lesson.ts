// <tutti-lesson>: a lesson room's teacher controls (issue 12, item 3). Everyone sees where they
// stand (waiting to be let in, in the lesson, muted or removed by the teacher, the mix the teacher
// set, with Take back control). The teacher's device lists the others: Let in / Decline for those
// waiting; Mute, Remove, Set mix and Make teacher for those in. Each command is signed on this
// device (src/room/lesson.ts) and every member's device checks it before acting. Shows a Session's
// state and calls its methods.

import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { MAX_DEPTH, MIN_DEPTH } from '../shared/constants.ts';
import { inLesson, standingOf, type LessonCommand } from '../room/lesson-authority.ts';
import type { Session } from '../room/session.ts';
import { SessionWatch } from './session-watch.ts';
import { viewStyles } from './tutti-app-styles.ts';

@customElement('tutti-lesson')
export class TuttiLesson extends LitElement {
  static override styles = [
    viewStyles,
    css`
      ul { list-style: none; padding: 0; margin: 0; display: grid; gap: 8px; }
      li { display: grid; gap: 6px; }
      .row { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
      .standing { color: #9fb0c0; font-size: 14px; }
      .notice { color: #f0c674; }
      .error { color: #ff8a8a; }
      .mix { display: grid; gap: 6px; padding: 6px 0 6px 12px; border-left: 2px solid #3a4857; }
      input[type='number'] { max-width: 6rem; }
    `,
  ];

  @property({ attribute: false }) session: Session | undefined;
  @state() private error = '';
  /** The member whose mix form is open (client id), or null. */
  @state() private mixFor: number | null = null;

  constructor() {
    super();
    new SessionWatch(this);
  }

  private async act(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
      this.error = '';
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    }
  }

  private command(s: Session, c: LessonCommand): void {
    void this.act(() => s.lessonCommand(c));
  }

  private status(s: Session): string {
    const v = s.lesson!.view;
    const teacher = v.state ? (v.state.teacher === s.room.clientId ? 'you' : (s.roster.get(v.state.teacher)?.name ?? 'the teacher')) : null;
    switch (v.standing) {
      case null:
        return 'Lesson room: waiting for the teacher to arrive';
      case 'teacher':
        return v.teacher ? 'Lesson room: you are the teacher' : 'Lesson room: handing over…';
      case 'admitted':
        return `In the lesson (teacher: ${teacher})`;
      case 'waiting':
        return `Waiting for ${teacher === null ? 'the teacher' : teacher} to let you in`;
      case 'removed':
        return 'The teacher removed you from this lesson';
    }
  }

  private submitMix(s: Session, id: number, form: HTMLFormElement): void {
    const f = new FormData(form);
    const master = Number(f.get('master')) / 100;
    const depthText = String(f.get('depth') ?? '').trim();
    const depth = Number(depthText);
    if (!(master >= 0 && master <= 2)) {
      this.error = 'Output volume: 0 to 200 %.';
      return;
    }
    if (depthText !== '' && !(Number.isInteger(depth) && depth >= MIN_DEPTH && depth <= MAX_DEPTH)) {
      this.error = `Depth: a whole number of quanta from ${MIN_DEPTH} to ${MAX_DEPTH}, or empty for automatic.`;
      return;
    }
    const peers: Record<string, { gain: number; muted: boolean }> = {};
    for (const [key, value] of f.entries()) {
      if (!key.startsWith('peer-')) continue;
      const g = Number(value) / 100;
      if (!(g >= 0 && g <= 2)) {
        this.error = 'Volumes: 0 to 200 %.';
        return;
      }
      peers[key.slice(5)] = { gain: g, muted: false };
    }
    this.mixFor = null;
    this.command(s, { kind: 'set-mix', id, mix: { master, ...(depthText === '' ? { adaptive: true } : { depth, adaptive: false }), peers } });
  }

  private renderMixForm(s: Session, id: number) {
    const st = s.lesson!.view.state;
    // Those the student hears: the teacher and the others in the lesson.
    const others = [...s.roster].filter(([x, m]) => x !== id && m.kind === 'participant' && inLesson(st, x));
    const m = s.roster.get(id)?.mix;
    return html`<form class="mix" data-testid="lesson-mix-form" @submit=${(e: Event) => {
      e.preventDefault();
      this.submitMix(s, id, e.target as HTMLFormElement);
    }}>
      <label>Their output volume (%) <input type="number" name="master" min="0" max="200" .value=${String(Math.round((m?.master ?? 1) * 100))} /></label>
      <label>Their jitter depth (quanta; empty: automatic) <input type="number" name="depth" min=${MIN_DEPTH} max=${MAX_DEPTH} .value=${m && m.adaptive === false ? String(m.depth) : ''} /></label>
      ${others.map(([x, o]) => html`<label>How loud they hear ${x === s.room.clientId ? 'you' : o.name} (%)
        <input type="number" name=${`peer-${x}`} min="0" max="200" .value=${String(Math.round((m?.peers[String(x)]?.gain ?? 1) * 100))} /></label>`)}
      <div class="row"><button type="submit" name="lesson-apply-mix">Set their mix</button><button type="button" @click=${() => (this.mixFor = null)}>Cancel</button></div>
    </form>`;
  }

  private renderTeacher(s: Session) {
    const st = s.lesson!.view.state!;
    const others = [...s.roster].filter(([id, m]) => id !== s.room.clientId && m.kind === 'participant');
    if (others.length === 0) return html`<p class="standing">No one else is here yet.</p>`;
    return html`<ul data-testid="lesson-members">
      ${others.map(([id, m]) => {
        const standing = standingOf(st, id);
        const muted = st.muted.includes(id);
        return html`<li data-lesson-member=${m.name} data-standing=${standing}>
          <div class="row"><strong>${m.name}</strong>
            <span class="standing">${standing === 'waiting' ? 'waiting to be let in' : standing === 'removed' ? 'removed' : muted ? 'in the lesson · muted by you' : 'in the lesson'}</span></div>
          <div class="row">
            ${standing === 'waiting'
              ? html`<button name="lesson-admit" @click=${() => this.command(s, { kind: 'admit', id })}>Let in</button>
                  <button name="lesson-decline" @click=${() => this.command(s, { kind: 'decline', id })}>Decline</button>`
              : standing === 'removed'
                ? html`<button name="lesson-admit" @click=${() => this.command(s, { kind: 'admit', id })}>Let back in</button>`
                : html`<button name="lesson-mute" aria-pressed=${String(muted)} @click=${() => this.command(s, { kind: 'mute', id, on: !muted })}>${muted ? 'Unmute' : 'Mute'}</button>
                    <button name="lesson-mix" aria-expanded=${String(this.mixFor === id)} @click=${() => (this.mixFor = this.mixFor === id ? null : id)}>Set mix</button>
                    <button name="lesson-remove" @click=${() => this.command(s, { kind: 'remove', id })}>Remove</button>
                    <button name="lesson-hand-over" ?disabled=${!m.lessonKey} @click=${() => void this.act(() => s.handOverLesson(id))}>Make teacher</button>`}
          </div>
          ${this.mixFor === id && standing === 'admitted' ? this.renderMixForm(s, id) : nothing}
        </li>`;
      })}
    </ul>`;
  }

  override render() {
    const s = this.session;
    if (!s?.lesson) return nothing;
    const v = s.lesson.view;
    const t = s.teacherMix;
    return html`<section class="card" aria-labelledby="lesson-h">
      <h2 id="lesson-h">Lesson</h2>
      <p data-testid="lesson-status" data-standing=${v.standing ?? 'none'}>${this.status(s)}</p>
      ${s.mutedByTeacher ? html`<p class="notice" data-testid="lesson-muted">The teacher muted your microphone.</p>` : nothing}
      ${t
        ? html`<p class="notice" data-testid="lesson-mix">The teacher set your mix (output, depth and volumes).
            <button name="lesson-take-back" @click=${() => s.takeBackMix()}>Take back control</button></p>`
        : nothing}
      ${v.teacher && v.state ? this.renderTeacher(s) : nothing}
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
    </section>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-lesson': TuttiLesson;
  }
}
