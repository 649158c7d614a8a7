// <tutti-share>: the room's link with a copy button and a QR code drawn locally (lean-qr, no
// network). The password goes into the link only if asked, and then only in the # fragment.

import { LitElement, css, html, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { generate } from 'lean-qr';
import { roomLink } from '../room/directory.ts';

@customElement('tutti-share')
export class TuttiShare extends LitElement {
  static override styles = css`
    :host { display: grid; gap: 8px; }
    .row { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
    output { font: 13px ui-monospace, monospace; overflow-wrap: anywhere; flex: 1; min-width: 0; }
    canvas { width: 180px; height: 180px; image-rendering: pixelated; background: #fff; border-radius: 6px; }
    label { display: flex; gap: 8px; align-items: center; min-height: 44px; font-size: 14px; }
    input[type='checkbox'] { width: 22px; height: 22px; }
    button { font: inherit; min-height: 44px; padding: 0 14px; border-radius: 6px; border: 1px solid #3a4857; background: #222d39; color: inherit; cursor: pointer; }
    :focus-visible { outline: 2px solid #6cb6ff; outline-offset: 2px; }
  `;
  @property() room = '';
  @property() password = '';
  /** Set for a remote-pairing code: the client id the phone will control. */
  @property({ type: Number }) remote: number | undefined;
  @property() label = 'Room link';
  @state() private withPassword = false;
  @state() private copied = false;
  @query('canvas') private canvas!: HTMLCanvasElement;

  get link(): string {
    const base = `${location.origin}${location.pathname}`;
    const pw = this.password && (this.withPassword || this.remote !== undefined) ? this.password : undefined;
    return roomLink(base, { room: this.room, ...(pw ? { password: pw } : {}), ...(this.remote !== undefined ? { remote: this.remote } : {}) });
  }

  override updated(_changed: PropertyValues<this>): void {
    generate(this.link).toCanvas(this.canvas);
  }

  private async copy(): Promise<void> {
    try {
      await navigator.clipboard.writeText(this.link);
      this.copied = true;
      setTimeout(() => (this.copied = false), 2000);
    } catch {
      // Clipboard refused (no permission): select the text so the user can copy it by hand.
      const sel = getSelection();
      const out = this.renderRoot.querySelector('output');
      if (sel && out) sel.selectAllChildren(out);
    }
  }

  override render() {
    return html`
      <div class="row">
        <output aria-label=${this.label} data-testid="share-link">${this.link}</output>
        <button @click=${this.copy}>${this.copied ? 'Copied' : 'Copy link'}</button>
      </div>
      ${this.password && this.remote === undefined
        ? html`<label><input type="checkbox" .checked=${this.withPassword} @change=${(e: Event) => (this.withPassword = (e.target as HTMLInputElement).checked)} />
            Put the password in the link (after #: never sent to the server, but anyone with the link can join)</label>`
        : null}
      <canvas role="img" aria-label=${`QR code of the ${this.label.toLowerCase()}`}></canvas>
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-share': TuttiShare;
  }
}
