// <tutti-meter>: a horizontal peak meter in dBFS. It polls its `read` function once per animation
// frame and moves a bar, without re-rendering the element (meters update at display rate).

import { LitElement, css, html } from 'lit';
import { customElement, property, query } from 'lit/decorators.js';

const FLOOR_DB = -60;

/** Peak (linear) to a 0..1 bar position on a -60..0 dBFS scale. */
export function meterPosition(peak: number): number {
  if (!(peak > 0)) return 0;
  const db = 20 * Math.log10(peak);
  return Math.min(1, Math.max(0, (db - FLOOR_DB) / -FLOOR_DB));
}

/**
 * @csspart mask - the cover that uncovers the scale up to the current level
 */
@customElement('tutti-meter')
export class TuttiMeter extends LitElement {
  static override styles = css`
    :host { display: block; position: relative; height: 8px; border-radius: 4px; overflow: hidden;
      background: linear-gradient(90deg, #3fb58a 0 70%, #e3c14b 70% 90%, #e5534b 90%); }
    /* The scale stays put (red means the top 6 dB); a mask uncovers it from the left. */
    .mask { position: absolute; inset: 0; background: #26313d; transform-origin: right; transform: scaleX(1); }
  `;
  /** Returns the current peak, linear (1 = full scale). */
  @property({ attribute: false }) read: () => number = () => 0;
  @property() label = 'level';
  @query('.mask') private mask!: HTMLDivElement;
  private raf = 0;

  override connectedCallback(): void {
    super.connectedCallback();
    const tick = () => {
      const pos = meterPosition(this.read());
      if (this.mask) this.mask.style.transform = `scaleX(${1 - pos})`;
      this.setAttribute('aria-valuenow', String(Math.round(pos * 100)));
      this.raf = requestAnimationFrame(tick);
    };
    this.raf = requestAnimationFrame(tick);
  }
  override disconnectedCallback(): void {
    super.disconnectedCallback();
    cancelAnimationFrame(this.raf);
  }
  override firstUpdated(): void {
    this.setAttribute('role', 'meter');
    this.setAttribute('aria-valuemin', '0');
    this.setAttribute('aria-valuemax', '100');
    this.setAttribute('aria-label', this.label);
  }
  override render() {
    return html`<div class="mask" part="mask"></div>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-meter': TuttiMeter;
  }
}
