// <tutti-app>: the page's shell. Shows the join view (<tutti-join>) until the user joins, then the
// room view of a participant (<tutti-room>) or of a paired phone (<tutti-remote-view>), and starts
// and ends the Session (src/room/session.ts) those views show. Keeps the player's audio choices
// from one room to the next, and shows what went wrong when a join fails.

import { LitElement, html, nothing } from 'lit';
import { customElement, state } from 'lit/decorators.js';
import type { StatsMessage } from '../shared/worker-protocol.ts';
import { TuttiError } from '../engine/errors.ts';
import { testOptionsFromUrl } from '../engine/test-options.ts';
import { parseRoomLink, rememberRoom } from '../room/directory.ts';
import { AudioChoices, Session, ownSignalingUrl, type SessionIdentity } from '../room/session.ts';
import { shellStyles } from './tutti-app-styles.ts';
import './tutti-join.ts';
import './tutti-room.ts';
import './tutti-remote-view.ts';
import './tutti-recorder.ts';
import { RecorderBridge } from '../engine/recorder-bridge.ts';

const params = new URLSearchParams(location.search);
const link = parseRoomLink(location.hash);

@customElement('tutti-app')
export class TuttiApp extends LitElement {
  static override styles = shellStyles;

  @state() private phase: 'join' | 'joining' | 'room' = 'join';
  @state() private error = '';
  /** What the join view offers: from the share link (`#room=`), or an older `?room=` link (the installed app's shortcuts and bookmarks). */
  @state() private room = link?.room ?? params.get('room') ?? '';
  @state() private password = link?.password ?? '';
  @state() private remoteOf: number | undefined = link?.remote;
  private readonly choices = new AudioChoices();
  /** Takes on this device, and the one being recorded (one recorder worker per page); exposed read-only for tests. */
  recorder: RecorderBridge | undefined;
  /** The current session; exposed read-only for tests (e.g. to take the room offline). */
  session: Session | null = null;

  /** Latest stats from the network worker (1 Hz); exposed for tests. */
  get stats(): StatsMessage | null {
    return this.session?.stats ?? null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    addEventListener('pagehide', this.onPageHide);
    // Made at start so that takes a crash cut off are repaired and listed before anyone joins.
    this.recorder ??= new RecorderBridge();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    removeEventListener('pagehide', this.onPageHide);
  }

  private readonly onPageHide = (): void => {
    this.session?.abandon();
  };

  private readonly onError = (e: Event): void => {
    this.error = (e as CustomEvent<string>).detail;
  };

  private async join(e: CustomEvent<SessionIdentity>): Promise<void> {
    const identity = e.detail;
    this.error = '';
    this.room = identity.room;
    this.password = identity.password;
    this.remoteOf = identity.remoteOf;
    this.phase = 'joining';
    try {
      // Test switches in the address act only in the test build; in what users run this is a
      // constant null and the parser is not in the bundle (a shared link cannot change audio).
      const test = __TUTTI_TEST__ ? testOptionsFromUrl(params) : null;
      const session = await Session.start(identity, this.choices, ownSignalingUrl(), test);
      session.addEventListener('error', this.onError);
      if (this.recorder) session.attachRecorder(this.recorder);
      this.session = session;
      rememberRoom(identity.room, !!identity.password);
      history.replaceState(null, '', `${location.pathname}${location.search}#room=${encodeURIComponent(identity.room)}`);
      this.phase = 'room';
    } catch (err) {
      this.error = err instanceof TuttiError ? err.message : `Could not start audio: ${err instanceof Error ? err.message : String(err)}`;
      this.phase = 'join';
    }
  }

  /** Back to the join view, which offers the same room again (the password is never carried over). */
  private async leave(): Promise<void> {
    const s = this.session;
    this.session = null;
    this.phase = 'join';
    this.remoteOf = undefined;
    this.password = '';
    if (!s) return;
    s.removeEventListener('error', this.onError);
    await this.recorder?.stop(); // a take ends with the room it recorded
    await s.leave();
  }

  override render() {
    const s = this.session;
    return html`
      <h1>Tutti</h1>
      ${this.error ? html`<p class="error" role="alert" data-testid="error">${this.error}</p>` : nothing}
      ${this.phase === 'room' && s
        ? s.engine
          ? html`<tutti-room .session=${s} .recorder=${this.recorder} @leave-room=${() => this.leave()} @retry-password=${() => this.leave()}></tutti-room>`
          : html`<tutti-remote-view .session=${s} @leave-room=${() => this.leave()} @retry-password=${() => this.leave()}></tutti-remote-view>`
        : html`<tutti-join .room=${this.room} .password=${this.password} .remoteOf=${this.remoteOf} .choices=${this.choices}
            ?busy=${this.phase === 'joining'} @join-room=${this.join}></tutti-join>
            <tutti-recorder .recorder=${this.recorder}></tutti-recorder>`}
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-app': TuttiApp;
  }
}
