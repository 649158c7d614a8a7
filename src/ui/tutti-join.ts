// <tutti-join>: the join view. The form (name, room, password, role, instrument, mono or stereo),
// "Create lesson room", the server's open rooms and this device's recent rooms, the settings and
// the set-up check. Fires `join-room` with who joins which room; the app starts the session.

import { LitElement, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { ROLES, type OpenRoom, type Role } from '../shared/signaling-protocol.ts';
import { forgetRoom, newRoomName, parseRoomLink, recentRooms, type RecentRoom } from '../room/directory.ts';
import { lessonRoomName, newLessonKey } from '../room/lesson-authority.ts';
import { saveLessonKey } from '../room/lesson-keys.ts';
import { fetchOpenRooms } from '../room/open-rooms.ts';
import { ownSignalingUrl, type AudioChoices, type SessionIdentity } from '../room/session.ts';
import { viewStyles } from './tutti-app-styles.ts';
import './tutti-settings.ts';
import './tutti-setup-check.ts';

/** How often the join view refreshes the open-rooms list. */
const OPEN_ROOMS_REFRESH_MS = 10_000;

/**
 * The installed app's shortcuts (manifest `shortcuts`, vite.config.ts) open `/?action=new-room` and
 * `/?action=join`. Neither acts on its own: starting audio needs a gesture in the page, so the
 * shortcut takes the user to the one control that finishes the job.
 */
export type ShortcutAction = 'new-room' | 'join';
function shortcutAction(value: string | null): ShortcutAction | undefined {
  return value === 'new-room' || value === 'join' ? value : undefined;
}

/**
 * @fires join-room - the form was sent: who joins which room (`detail`).
 */
@customElement('tutti-join')
export class TuttiJoin extends LitElement {
  static override styles = viewStyles;

  /** The room and password to offer (from a link, or kept after a wrong password). */
  @property() room = '';
  @property() password = '';
  /** Remote mode: the client id of the participant this device would control (a pairing link). */
  @property({ attribute: false }) remoteOf: number | undefined;
  /** The player's audio choices; the form sets `channels`. */
  @property({ attribute: false }) choices!: AudioChoices;
  /** A join is under way. */
  @property({ type: Boolean }) busy = false;

  @state() private name = localStorage.getItem('tutti.name') ?? '';
  @state() private myRole: Role = (localStorage.getItem('tutti.role') as Role | null) ?? 'student';
  @state() private instrument = localStorage.getItem('tutti.instrument') ?? '';
  @state() private error = '';
  /** A hint for a shortcut's action (e.g. "enter your name first"). */
  @state() private hint = '';
  @state() private recent: RecentRoom[] = recentRooms();
  /** The server's open-rooms list. */
  @state() private openRooms: OpenRoom[] = [];
  private openRoomsTimer: ReturnType<typeof setInterval> | undefined;

  override connectedCallback(): void {
    super.connectedCallback();
    addEventListener('hashchange', this.onHash);
    void this.refreshOpenRooms();
    this.openRoomsTimer = setInterval(() => void this.refreshOpenRooms(), OPEN_ROOMS_REFRESH_MS);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    removeEventListener('hashchange', this.onHash);
    clearInterval(this.openRoomsTimer);
  }

  private async refreshOpenRooms(): Promise<void> {
    const list = await fetchOpenRooms();
    this.openRooms = list.rooms;
    // A server that keeps no list (turned off, or a static host) will not start keeping one.
    if (list.answered && !list.enabled) clearInterval(this.openRoomsTimer);
  }

  override firstUpdated(): void {
    const params = new URLSearchParams(location.search);
    const action = shortcutAction(params.get('action'));
    if (!action || this.remoteOf !== undefined) return;
    // Drop the action from the address so a reload or a shared copy does not repeat it.
    params.delete('action');
    history.replaceState(null, '', `${location.pathname}${params.size ? `?${params}` : ''}${location.hash}`);
    const field = (name: string) => this.renderRoot.querySelector<HTMLElement>(`input[name=${name}]`);
    if (!this.name.trim()) {
      this.hint = action === 'new-room' ? 'Enter your name, then press Create lesson room.' : 'Enter your name and the room, then press Join.';
      field('name')?.focus();
    } else if (action === 'new-room') {
      this.hint = 'Press Create lesson room (or Enter) to open a new room with an unguessable name.';
      this.renderRoot.querySelector<HTMLElement>('button[data-action=new-room]')?.focus();
    } else {
      this.hint = this.room ? '' : 'Paste the room name from your teacher\'s link, then press Join.';
      field(this.room ? 'password' : 'room')?.focus();
    }
  }

  /** A room link opened while the app is already loaded (only the fragment changed). */
  private readonly onHash = (): void => {
    const l = parseRoomLink(location.hash);
    if (!l) return;
    this.room = l.room;
    this.password = l.password ?? '';
    this.remoteOf = l.remote;
  };

  /** A room picked from a list: fill it in and go to what is still missing (password, name, Join). */
  private pickRoom(room: string, locked: boolean): void {
    this.room = room;
    this.password = '';
    const q = (sel: string) => this.renderRoot.querySelector<HTMLElement>(sel);
    (locked ? q('input[name=password]') : !this.name.trim() ? q('input[name=name]') : q('button[type=submit]'))?.focus();
  }

  /**
   * A lesson room: this device makes the teacher key, keeps it (IndexedDB) and names the room after
   * it, so whoever joins by the name knows whose commands to follow (src/room/lesson-authority.ts).
   */
  private async createRoom(): Promise<void> {
    try {
      const key = await newLessonKey();
      const name = await lessonRoomName(key.pub);
      await saveLessonKey(name, key);
      this.room = name;
    } catch (err) {
      // No WebCrypto or no IndexedDB (a private window may refuse it): an ordinary room, and say why.
      this.room = newRoomName();
      this.myRole = 'teacher';
      this.remoteOf = undefined;
      this.join();
      this.hint = `This browser cannot keep a teacher key (${err instanceof Error ? err.message : String(err)}): the room has no teacher controls.`;
      return;
    }
    this.myRole = 'teacher';
    this.remoteOf = undefined;
    this.join();
  }

  private join(e?: Event): void {
    e?.preventDefault();
    const room = this.room.trim();
    const name = this.name.trim();
    if (!room || !name) {
      this.error = 'Enter your name and a room name.';
      return;
    }
    this.error = '';
    this.hint = '';
    localStorage.setItem('tutti.name', name);
    localStorage.setItem('tutti.role', this.myRole);
    localStorage.setItem('tutti.instrument', this.instrument);
    const detail: SessionIdentity = { room, password: this.password, name, role: this.myRole, instrument: this.instrument, ...(this.remoteOf !== undefined ? { remoteOf: this.remoteOf } : {}) };
    this.dispatchEvent(new CustomEvent('join-room', { detail, bubbles: true, composed: true }));
  }

  private setChannels(channels: 1 | 2): void {
    this.choices.channels = channels;
    this.requestUpdate();
  }

  private forget(room: string): void {
    forgetRoom(room);
    this.recent = recentRooms();
  }

  override render() {
    const remote = this.remoteOf !== undefined;
    const channels = this.choices.channels;
    return html`
      ${this.error ? html`<p class="error" role="alert" data-testid="error">${this.error}</p>` : nothing}
      <form @submit=${this.join} aria-label=${remote ? 'Pair this device as a remote' : 'Join a room'}>
        ${this.hint && !remote ? html`<p class="muted-note" data-testid="hint">${this.hint}</p>` : nothing}
        ${remote ? html`<p class="muted-note">This device will be a remote control for one participant of room <strong>${this.room}</strong>: no microphone, no audio.</p>` : nothing}
        <label>Your name
          <input type="text" name="name" autocomplete="nickname" maxlength="40" required .value=${this.name}
            @input=${(e: Event) => (this.name = (e.target as HTMLInputElement).value)} />
        </label>
        <label>Room
          <input type="text" name="room" maxlength="80" required autocomplete="off" .value=${this.room}
            @input=${(e: Event) => (this.room = (e.target as HTMLInputElement).value)} />
        </label>
        <label>Password (optional)
          <input type="password" name="password" autocomplete="off" maxlength="200" .value=${this.password}
            @input=${(e: Event) => (this.password = (e.target as HTMLInputElement).value)} />
        </label>
        ${remote
          ? nothing
          : html`<div class="controls">
              <label>Role
                <select name="role" @change=${(e: Event) => (this.myRole = (e.target as HTMLSelectElement).value as Role)}>
                  ${ROLES.map((r) => html`<option value=${r} ?selected=${this.myRole === r}>${r[0]!.toUpperCase() + r.slice(1)}</option>`)}
                </select>
              </label>
              <label>Instrument
                <input type="text" name="instrument" maxlength="40" .value=${this.instrument}
                  @input=${(e: Event) => (this.instrument = (e.target as HTMLInputElement).value)} />
              </label>
            </div>
            <fieldset>
              <legend>Send</legend>
              <label><input type="radio" name="channels" value="1" .checked=${channels === 1} @change=${() => this.setChannels(1)} /> Mono</label>
              <label><input type="radio" name="channels" value="2" .checked=${channels === 2} @change=${() => this.setChannels(2)} /> Stereo</label>
            </fieldset>`}
        <div class="bar">
          <button class="primary" type="submit" ?disabled=${this.busy}>${this.busy ? 'Joining…' : remote ? 'Connect remote' : 'Join'}</button>
          ${remote
            ? html`<button type="button" @click=${() => (this.remoteOf = undefined)}>Use this device normally</button>`
            : html`<button type="button" data-action="new-room" ?disabled=${this.busy} @click=${this.createRoom}
                title="A new room with an unguessable name; add a password above first if you want one">Create lesson room</button>`}
        </div>
      </form>
      <tutti-settings></tutti-settings>
      <tutti-setup-check .channels=${channels} .signalUrl=${ownSignalingUrl()}></tutti-setup-check>
      ${this.openRooms.length && !remote
        ? html`<section aria-labelledby="open-h" class="recent">
            <h2 id="open-h">Open rooms on this server</h2>
            <ul data-testid="open-rooms">
              ${this.openRooms.map((r) => html`<li>
                <button class="link" @click=${() => this.pickRoom(r.room, r.locked)}
                  aria-label=${`Use open room ${r.title}${r.locked ? ' (password needed)' : ''}`}>${r.title}${r.locked ? ' 🔒' : ''}</button>
                <span class="muted-note">${r.connected} connected${r.title !== r.room ? html` · ${r.room}` : nothing}</span>
              </li>`)}
            </ul>
          </section>`
        : nothing}
      ${this.recent.length && !remote
        ? html`<section aria-labelledby="recent-h" class="recent">
            <h2 id="recent-h">Recent rooms on this device</h2>
            <ul data-testid="recent-rooms">
              ${this.recent.map((r) => html`<li>
                <button class="link" @click=${() => this.pickRoom(r.room, r.locked)}
                  aria-label=${`Use room ${r.room}`}>${r.room}${r.locked ? ' 🔒' : ''}</button>
                <span class="muted-note">${new Date(r.lastJoined).toLocaleString()}</span>
                <button aria-label=${`Forget room ${r.room}`} @click=${() => this.forget(r.room)}>✕</button>
              </li>`)}
            </ul>
          </section>`
        : nothing}
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-join': TuttiJoin;
  }
  interface HTMLElementEventMap {
    'join-room': CustomEvent<SessionIdentity>;
  }
}
