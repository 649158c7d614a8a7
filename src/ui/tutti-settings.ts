// <tutti-settings>: this device's connection settings, today the STUN/TURN servers (JSON). Saved
// to localStorage only when valid, with a message that says what is wrong otherwise; "Use server
// default" removes the override so the server's list (/config.json) applies. Used at the next join.

import { LitElement, css, html, nothing } from 'lit';
import { customElement, state } from 'lit/decorators.js';
import { clearDeviceIceOverride, deviceIceOverride, saveDeviceIceOverride, serverIceServers } from '../room/ice-servers.ts';
import type { IceServer } from '../shared/ice-servers.ts';

const EXAMPLE = '[{"urls": "stun:stun.example.org:3478"},\n {"urls": "turn:turn.example.org:3478", "username": "u", "credential": "p"}]';

@customElement('tutti-settings')
export class TuttiSettings extends LitElement {
  static override styles = css`
    :host { display: block; margin-top: 16px; font-size: 14px; color: #c4d0dc; }
    details { border: 1px solid #3a4857; border-radius: 6px; padding: 8px 12px; }
    summary { cursor: pointer; min-height: 44px; line-height: 44px; }
    .body { display: grid; gap: 8px; margin-top: 8px; }
    label { display: grid; gap: 4px; }
    textarea { font: 13px/1.4 ui-monospace, monospace; min-height: 96px; padding: 8px; border-radius: 6px; border: 1px solid #3a4857; background: #18212b; color: #e8eef4; resize: vertical; }
    textarea[aria-invalid='true'] { border-color: #e5534b; }
    .row { display: flex; gap: 8px; flex-wrap: wrap; }
    button { font: inherit; min-height: 44px; padding: 0 16px; border-radius: 6px; border: 1px solid #3a4857; background: #222d39; color: inherit; cursor: pointer; }
    button:focus-visible, textarea:focus-visible, summary:focus-visible { outline: 2px solid #6cb6ff; outline-offset: 2px; }
    .error { color: #ffb4ae; margin: 0; }
    .note { color: #9fb0c0; margin: 0; }
  `;

  @state() private text = '';
  @state() private error = '';
  @state() private note = '';
  @state() private serverList: IceServer[] | null = null;
  @state() private overridden = false;

  override connectedCallback(): void {
    super.connectedCallback();
    const own = deviceIceOverride();
    this.overridden = own !== null;
    this.text = own?.text ?? '';
    this.error = own && !own.ok ? `The saved setting is invalid and is ignored: ${own.error}` : '';
    void serverIceServers().then((list) => (this.serverList = list));
  }

  private save(): void {
    const parsed = saveDeviceIceOverride(this.text);
    if (!parsed.ok) {
      this.error = parsed.error;
      this.note = '';
      return;
    }
    this.error = '';
    this.overridden = true;
    this.text = JSON.stringify(parsed.servers, null, 2);
    this.note = `Saved ${parsed.servers.length} server${parsed.servers.length === 1 ? '' : 's'} for this device. Used the next time you join.`;
  }

  private useDefault(): void {
    clearDeviceIceOverride();
    this.overridden = false;
    this.text = '';
    this.error = '';
    this.note = 'This device now uses the server default.';
  }

  override render() {
    const def = this.serverList === null ? 'loading…' : this.serverList.length === 0 ? 'none (fine on a LAN)' : this.serverList.map((s) => [s.urls].flat().join(', ')).join('; ');
    return html`<details>
      <summary>Connection settings</summary>
      <div class="body">
        <p class="note">Server default STUN/TURN: ${def}. ${this.overridden ? 'This device overrides it.' : ''}</p>
        <label>STUN/TURN servers for this device (JSON)
          <textarea name="ice-servers" spellcheck="false" placeholder=${EXAMPLE} aria-invalid=${this.error ? 'true' : 'false'}
            aria-describedby="ice-error" .value=${this.text} @input=${(e: Event) => (this.text = (e.target as HTMLTextAreaElement).value)}></textarea>
        </label>
        <p id="ice-error" class="error" aria-live="polite">${this.error || nothing}</p>
        <div class="row">
          <button type="button" @click=${this.save}>Save servers</button>
          <button type="button" @click=${this.useDefault} ?disabled=${!this.overridden}>Use server default</button>
        </div>
        ${this.note ? html`<p class="note" aria-live="polite">${this.note}</p>` : nothing}
      </div>
    </details>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-settings': TuttiSettings;
  }
}
