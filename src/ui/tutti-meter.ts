// <tutti-meter>: a horizontal peak meter in dBFS. It polls its `read` function on the shared display
// timer and moves a bar when the level moved by a visible step, without re-rendering the element.
// The bar is its own compositor layer (`will-change: transform`): moving it costs a composite, not
// a repaint. In a three-person room of headless browsers on a two-core machine that took the
// raster and display-compositor threads from 27 % of one core to 10 % across the three pages
// (`npx tsx bench/room-cpu.ts`; docs/ARCHITECTURE.md, "Meters").

import { LitElement, css, html } from 'lit';
import { customElement, property, query } from 'lit/decorators.js';
import { POLLS_PER_SECOND, onDisplayPoll } from './display-poll.ts';

const FLOOR_DB = -60;
/** The bar moves in 0.5 dB steps (120 over the scale): finer than the eye sees on an 8 px bar. */
const STEPS = 120;
/**
 * The accessible value (aria-valuenow) follows about twice a second (every ARIA_EVERY-th poll):
 * a screen reader announces a value far less often than the bar moves, and an attribute written
 * at every poll would restyle the element each time for nothing anyone hears.
 */
const ARIA_EVERY = Math.max(1, Math.round(POLLS_PER_SECOND / 2));

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
    .mask { position: absolute; inset: 0; background: #26313d; transform-origin: right; transform: scaleX(1); will-change: transform; }
  `;
  /** Returns the current peak, linear (1 = full scale). */
  @property({ attribute: false }) read: () => number = () => 0;
  @property() label = 'level';
  @query('.mask') private mask!: HTMLDivElement;
  private stopPolling: () => void = () => {};
  /** The bar position written last, in steps of 1/STEPS (−1: none yet). */
  private shown = -1;
  /** The accessible value written last (0–100; −1: none yet), and polls since. */
  private announced = -1;
  private polls = 0;

  override connectedCallback(): void {
    super.connectedCallback();
    this.stopPolling = onDisplayPoll(() => {
      // Only a visible change is written: a steady level (a held note, silence) costs the page no
      // style, layout or paint at all (src/ui/display-poll.ts).
      const step = Math.round(meterPosition(this.read()) * STEPS);
      if (step !== this.shown && this.mask) {
        this.shown = step;
        this.mask.style.transform = `scaleX(${1 - step / STEPS})`;
      }
      if (++this.polls < ARIA_EVERY || this.shown < 0) return;
      this.polls = 0;
      const value = Math.round((this.shown / STEPS) * 100);
      if (value === this.announced) return;
      this.announced = value;
      this.setAttribute('aria-valuenow', String(value));
    });
  }
  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.stopPolling();
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
