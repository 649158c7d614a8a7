// <tutti-remote-view>: the room view of a phone paired as a remote control (no audio): the room's
// name, the access line, the remote's controls (<tutti-remote>) and the room's connections. Fires `leave-room` and
// `retry-password`, like <tutti-room>.

import { LitElement, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { Session } from '../room/session.ts';
import { accessStatus } from './access-status.ts';
import { SessionWatch } from './session-watch.ts';
import { viewStyles } from './tutti-app-styles.ts';
import './tutti-remote.ts';
import './tutti-connections.ts';
import './tutti-session-log.ts';

@customElement('tutti-remote-view')
export class TuttiRemoteView extends LitElement {
  static override styles = viewStyles;

  @property({ attribute: false }) session: Session | undefined;
  constructor() {
    super();
    new SessionWatch(this);
  }

  private fire(type: 'leave-room' | 'retry-password'): void {
    this.dispatchEvent(new CustomEvent(type, { bubbles: true, composed: true }));
  }

  override render() {
    const s = this.session;
    if (!s) return nothing;
    return html`<section aria-label="Remote control, room ${s.identity.room}">
      <div class="bar">
        <strong class="grow room-name">Remote · ${s.identity.room}</strong>
        <button @click=${() => this.fire('leave-room')}>Leave</button>
      </div>
      ${accessStatus(s, () => this.fire('retry-password'))}
      <tutti-remote .room=${s.room} .target=${s.identity.remoteOf!} .roster=${s.roster}></tutti-remote>
      <section class="card" aria-labelledby="connections-h"><h2 id="connections-h">Connections</h2><tutti-connections .roster=${s.roster}></tutti-connections>
        <tutti-session-log .log=${s.log} .count=${s.log.entries.length + s.log.dropped} .room=${s.identity.room}></tutti-session-log></section>
    </section>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-remote-view': TuttiRemoteView;
  }
}
