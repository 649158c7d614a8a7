// <tutti-measure-tools>: the room's measurement bar (main thread): send figures, arrival-trace
// recording and its CSV download, and the JSON export of the recent stats. Formats and how to read
// them: docs/MEASUREMENT.md.

import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { AudioEngine } from '../engine/audio-engine.ts';
import { traceToCsv } from '../engine/trace-csv.ts';
import { downloadText, fileStamp } from './download.ts';
import { StatsRenderController } from './stats-render-controller.ts';

/** Stats messages in a JSON export: the last ten minutes at 1 Hz. */
export const EXPORT_SAMPLES = 600;

@customElement('tutti-measure-tools')
export class TuttiMeasureTools extends LitElement {
  static override styles = css`
    :host { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 12px; font-size: 13px; color: #9fb0c0; }
    button { min-height: 44px; padding: 0 12px; border-radius: 6px; border: 1px solid #3a4857; background: #222d39; color: #e6edf3; font: inherit; cursor: pointer; }
    button[aria-pressed='true'] { background: #7a2e2e; border-color: #a33; }
    .err { color: #e5534b; }
  `;
  @property({ attribute: false }) engine: AudioEngine | undefined;
  @state() private tracing = false;
  @state() private error = '';
  protected readonly recorder = new StatsRenderController(this, () => this.engine?.stats);

  private toggleTrace(): void {
    this.tracing = !this.tracing;
    this.engine?.net.setTrace(this.tracing);
  }

  private async downloadTrace(): Promise<void> {
    if (!this.engine) return;
    this.error = '';
    try {
      const trace = await this.engine.net.getTrace();
      downloadText(`tutti-trace-${fileStamp()}.csv`, 'text/csv', traceToCsv(trace));
    } catch (err) {
      this.error = `Could not download the trace: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  private exportStats(): void {
    const e = this.engine;
    if (!e) return;
    const d = e.deviceLatency();
    const data = e.stats.export({ outputLatencyMs: d.outputLatencyS * 1000, baseLatencyMs: d.baseLatencyS * 1000 }, EXPORT_SAMPLES);
    downloadText(`tutti-stats-${fileStamp()}.json`, 'application/json', JSON.stringify(data, null, 1));
  }

  override render() {
    const s = this.engine?.stats.latest();
    return html`
      ${s
        ? html`<span data-testid="send-figures">Out ${s.kbpsOut.toFixed(0)} kbit/s per peer · redundancy ${s.redundancy} · depth ${s.adaptive ? 'adaptive' : 'manual'}</span>`
        : nothing}
      <button aria-pressed=${String(this.tracing)} @click=${this.toggleTrace}
        title="Record the arrival time of every received frame (up to 10 minutes)">Record arrival trace</button>
      ${s && (this.tracing || s.traceFrames > 0) ? html`<span data-testid="trace-frames">${s.traceFrames} frames traced</span>` : nothing}
      <button @click=${this.downloadTrace} ?disabled=${!s || s.traceFrames === 0}>Download trace</button>
      <button @click=${this.exportStats} ?disabled=${!s}>Export stats (JSON)</button>
      ${this.error ? html`<span class="err" role="alert">${this.error}</span>` : nothing}
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-measure-tools': TuttiMeasureTools;
  }
}
