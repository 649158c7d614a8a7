// A Lit reactive controller: re-renders its host whenever the Session it shows changes (the
// session dispatches `change`), following the host's `session` property.

import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { Session } from '../room/session.ts';

export class SessionWatch implements ReactiveController {
  private watched: Session | null = null;
  private readonly onChange = (): void => this.host.requestUpdate();

  constructor(private readonly host: ReactiveControllerHost & { session: Session | undefined }) {
    host.addController(this);
  }

  hostUpdate(): void {
    const s = this.host.session ?? null;
    if (s === this.watched) return;
    this.watched?.removeEventListener('change', this.onChange);
    s?.addEventListener('change', this.onChange);
    this.watched = s;
  }

  hostDisconnected(): void {
    this.watched?.removeEventListener('change', this.onChange);
    this.watched = null;
  }
}
