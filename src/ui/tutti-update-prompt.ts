// <tutti-update-prompt>: a banner when a new version of Tutti is waiting ("Update now" makes it
// take over and reloads) or when one reload makes the page cross-origin isolated (first visit
// from a host that sends no COOP/COEP). Reads the shared PwaController.

import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { pwa, type PwaController, type PwaState } from '../pwa/service-worker.ts';

@customElement('tutti-update-prompt')
export class TuttiUpdatePrompt extends LitElement {
  static override styles = css`
    :host { position: fixed; left: 0; right: 0; bottom: 0; z-index: 10; display: flex; justify-content: center; pointer-events: none; }
    .banner { pointer-events: auto; margin: 12px; padding: 12px 16px; display: flex; gap: 12px; align-items: center; flex-wrap: wrap;
      max-width: 640px; background: #22303d; color: #e8eef4; border: 1px solid #4fd1a5; border-radius: 8px; box-shadow: 0 4px 16px #0008; }
    p { margin: 0; flex: 1 1 240px; }
    button { font: inherit; min-height: 44px; min-width: 44px; padding: 0 16px; border-radius: 6px; border: 1px solid #3a4857; background: #222d39; color: inherit; cursor: pointer; }
    button.primary { background: #2f7d62; border-color: #3fb58a; }
    button:focus-visible { outline: 2px solid #6cb6ff; outline-offset: 2px; }
  `;

  @property({ attribute: false }) controller: PwaController = pwa;
  @state() private pwaState: PwaState = 'idle';

  private readonly onChange = (): void => {
    this.pwaState = this.controller.state;
  };

  override connectedCallback(): void {
    super.connectedCallback();
    this.controller.addEventListener('change', this.onChange);
    this.onChange();
  }
  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.controller.removeEventListener('change', this.onChange);
  }

  override render() {
    if (this.pwaState === 'update-ready') {
      return html`<div class="banner" role="status" aria-label="Update available">
        <p>A new version of Tutti is ready. Updating reloads the page (leaving any room you are in).</p>
        <button class="primary" @click=${() => this.controller.applyUpdate()}>Update now</button>
        <button @click=${() => this.controller.dismiss()}>Later</button>
      </div>`;
    }
    if (this.pwaState === 'reload-for-isolation') {
      return html`<div class="banner" role="status" aria-label="Reload needed">
        <p>Tutti is now available offline. Reload once to enable low-latency audio on this host.</p>
        <button class="primary" @click=${() => location.reload()}>Reload</button>
      </div>`;
    }
    return nothing;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-update-prompt': TuttiUpdatePrompt;
  }
}
