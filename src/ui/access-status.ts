// The room's access line, shared by the room view and the remote view: who is here, or why
// nothing can be read (a wrong password), or what the page is still waiting for.

import { html, nothing, type TemplateResult } from 'lit';
import type { Session } from '../room/session.ts';

/** `onRetry`: the user wants to enter the password again (leave, keep the room name). */
export function accessStatus(session: Session, onRetry: () => void): TemplateResult | typeof nothing {
  const room = session.room;
  const others = [...session.roster.keys()].filter((id) => id !== room.clientId).length;
  switch (session.access) {
    case 'wrong-password': {
      const n = Math.max(1, room.topicClients - 1);
      return html`<div class="error" role="alert" data-testid="access">
        <strong>Wrong password.</strong> ${n} ${n === 1 ? 'other is' : 'others are'} in this room, but nothing they send can be
        read with your password, nor what you send with theirs. You see no notes, no roster and hear no audio.
        <button @click=${onRetry}>Enter the password again</button>
      </div>`;
    }
    case 'intruder':
      return html`<p class="muted-note" role="status" data-testid="access">Someone tried to join this room with a different password; they can read nothing.</p>`;
    case 'connected':
      return html`<p class="muted-note" role="status" data-testid="access">Connected · ${others + 1} in the room</p>`;
    case 'alone':
      return html`<p class="muted-note" role="status" data-testid="access">You are the first here. Share the link below.</p>`;
    case 'waiting': {
      // Subscribed sockets that have sent nothing: no claim about the password (PROTOCOL.md §3.6).
      const n = Math.max(1, room.topicClients - 1);
      return html`<p class="muted-note" role="status" data-testid="access">Waiting for others to join. ${n} other ${n === 1 ? 'connection to this room has' : 'connections to this room have'} sent nothing yet.</p>`;
    }
    case 'connecting':
      return html`<p class="muted-note" role="status" data-testid="access">Looking for the room…</p>`;
    default:
      session.access satisfies never;
      return nothing;
  }
}
