// <tutti-sparkline>: a small SVG line of the last `capacity` values (one per stats second), newest
// at the right edge, scaled from 0 to the larger of the data's maximum and `min-scale`. Gaps
// (null) break the line. Optional dashed reference line (e.g. the jitter-buffer target).

import { LitElement, css, html, svg, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';

const W = 120;
const H = 28;

/** SVG polyline point lists, one per unbroken run of values; x spans `capacity` slots, right-aligned. */
export function sparkPaths(values: readonly (number | null)[], capacity: number, top: number): string[] {
  const v = values.slice(-capacity);
  const dx = W / Math.max(1, capacity - 1);
  const x0 = W - (v.length - 1) * dx;
  const runs: string[] = [];
  let run: string[] = [];
  v.forEach((y, i) => {
    if (y === null || !Number.isFinite(y)) {
      if (run.length) runs.push(run.join(' '));
      run = [];
      return;
    }
    const py = H - 1 - (Math.min(Math.max(y, 0), top) / top) * (H - 2);
    run.push(`${(x0 + i * dx).toFixed(1)},${py.toFixed(1)}`);
  });
  if (run.length) runs.push(run.join(' '));
  return runs;
}

@customElement('tutti-sparkline')
export class TuttiSparkline extends LitElement {
  static override styles = css`
    :host { display: inline-grid; grid-template-columns: auto auto; align-items: center; gap: 6px; font: 12px ui-monospace, monospace; color: #9fb0c0; }
    svg { width: 120px; height: 28px; background: #111920; border-radius: 3px; }
    polyline { fill: none; stroke: #6cb6ff; stroke-width: 1.5; vector-effect: non-scaling-stroke; }
    line { stroke: #e3c14b; stroke-dasharray: 3 3; stroke-width: 1; vector-effect: non-scaling-stroke; }
  `;
  /** Oldest first; null = no value that second. */
  @property({ attribute: false }) values: readonly (number | null)[] = [];
  @property({ attribute: false }) reference: number | null = null;
  @property({ type: Number }) capacity = 60;
  @property({ type: Number, attribute: 'min-scale' }) minScale = 1;
  @property() label = '';
  @property() unit = '';

  override render() {
    const finite = this.values.slice(-this.capacity).filter((v): v is number => v !== null && Number.isFinite(v));
    const top = Math.max(this.minScale, this.reference ?? 0, ...finite);
    const last = finite.at(-1);
    const desc = `${this.label} over the last ${this.capacity} s: ${last === undefined ? 'no data' : `now ${last.toFixed(1)} ${this.unit}, max ${Math.max(...finite).toFixed(1)} ${this.unit}`}`;
    const refY = this.reference === null ? null : H - 1 - (Math.min(this.reference, top) / top) * (H - 2);
    return html`
      <svg viewBox="0 0 ${W} ${H}" preserveAspectRatio="none" role="img" aria-label=${desc}>
        ${refY === null ? nothing : svg`<line x1="0" x2=${W} y1=${refY} y2=${refY}></line>`}
        ${sparkPaths(this.values, this.capacity, top).map((points) => svg`<polyline points=${points}></polyline>`)}
      </svg>
      <span>${last === undefined ? '–' : `${last.toFixed(1)} ${this.unit}`}</span>
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-sparkline': TuttiSparkline;
  }
}
