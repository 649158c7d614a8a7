// <tutti-quality>: the connection quality label (Excellent / Good / Fair / Poor) as a coloured
// badge; its tooltip names the limits that kept it from the next tier (src/ui/quality.ts).

import { LitElement, css, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { Quality } from './quality.ts';

@customElement('tutti-quality')
export class TuttiQuality extends LitElement {
  static override styles = css`
    :host { display: inline-block; }
    span { display: inline-block; padding: 2px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; background: #2b3641; color: #c4d0dc; }
    .Excellent { background: #1f5c45; color: #b8f0d8; }
    .Good { background: #2d5a1f; color: #d3f0b8; }
    .Fair { background: #6b5a16; color: #f7e7a8; }
    .Poor { background: #7a2e2e; color: #ffd0d0; }
  `;
  /** Null while measuring (no round trip yet). */
  @property({ attribute: false }) quality: Quality | null = null;

  override render() {
    const q = this.quality;
    if (!q) return html`<span data-testid="quality" title="Waiting for the first round-trip measurement">Measuring…</span>`;
    const why = q.reasons.length ? `Not better because: ${q.reasons.join('; ')}` : 'Meets every Excellent limit';
    return html`<span class=${q.label} data-testid="quality" data-quality=${q.label} title=${why}>${q.label}</span>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-quality': TuttiQuality;
  }
}
