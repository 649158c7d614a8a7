// <tutti-setup-check>: "Check my setup" on the join screen (main thread). Starts the audio engine,
// runs the in-page loopback and the signaling round trip (src/engine/setup-check.ts), shows the
// figures, and stops the engine again so that joining afterwards starts fresh.

import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { AudioEngine } from '../engine/audio-engine.ts';
import { TuttiError } from '../engine/errors.ts';
import { runSetupCheck, type SetupCheckResult } from '../engine/setup-check.ts';

@customElement('tutti-setup-check')
export class TuttiSetupCheck extends LitElement {
  static override styles = css`
    :host { display: grid; gap: 8px; margin-top: 16px; font-size: 14px; color: #c4d0dc; }
    button { justify-self: start; font: inherit; min-height: 44px; padding: 0 16px; border-radius: 6px; border: 1px solid #3a4857; background: #222d39; color: inherit; cursor: pointer; }
    dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; font: 13px ui-monospace, monospace; }
    dt { color: #9fb0c0; }
    dd { margin: 0; }
    .note { color: #9fb0c0; font-size: 12px; }
    .err { color: #e5534b; }
  `;
  @property({ type: Number }) channels: 1 | 2 = 2;
  /** WebSocket URL of the signaling server. */
  @property({ attribute: false }) signalUrl = '';
  @state() private running = false;
  @state() private progress = '';
  @state() private error = '';
  @state() private result: SetupCheckResult | null = null;

  private async run(): Promise<void> {
    this.running = true;
    this.error = '';
    this.result = null;
    this.progress = 'Starting audio…';
    let engine: AudioEngine | null = null;
    try {
      engine = await AudioEngine.start({ channels: this.channels });
      this.result = await runSetupCheck(engine, { signalUrl: this.signalUrl, onProgress: (m) => (this.progress = m) });
    } catch (err) {
      this.error = err instanceof TuttiError || err instanceof Error ? err.message : String(err);
    } finally {
      await engine?.stop().catch(() => {});
      this.running = false;
      this.progress = '';
    }
  }

  override render() {
    const r = this.result;
    return html`
      <button type="button" @click=${this.run} ?disabled=${this.running}>${this.running ? 'Checking…' : 'Check my setup'}</button>
      ${this.progress ? html`<span class="note" role="status">${this.progress}</span>` : nothing}
      ${this.error ? html`<span class="err" role="alert" data-testid="check-error">${this.error}</span>` : nothing}
      ${r
        ? html`<dl data-testid="check-result">
              <dt>Audio frames</dt><dd data-testid="check-fps">${r.framesPerSecond.toFixed(0)} frames/s (375 = every frame)</dd>
              <dt>Late</dt><dd data-testid="check-late">${r.latePercent.toFixed(2)} %</dd>
              <dt>Lost</dt><dd data-testid="check-lost">${r.lostPercent.toFixed(2)} %</dd>
              <dt>Added latency</dt><dd data-testid="check-latency">${r.latencyMs ? `p50 ${r.latencyMs.p50.toFixed(1)} ms · p99 ${r.latencyMs.p99.toFixed(1)} ms` : 'not measured'}</dd>
              <dt>Jitter buffer</dt><dd>${r.depth} quanta</dd>
              <dt>Channel round trip</dt><dd>${r.rttMs === null ? '–' : `${r.rttMs.toFixed(1)} ms`}</dd>
              <dt>Signaling server</dt><dd data-testid="check-signaling">${'error' in r.signaling ? r.signaling.error : `${r.signaling.medianMs.toFixed(1)} ms round trip (median of ${r.signaling.samplesMs.length})`}</dd>
            </dl>
            <span class="note">Added latency runs from the capture of a quantum to its playout on this machine, through both network
              workers, a real DataChannel and the jitter buffer; it excludes the microphone and speaker (device) latency and any
              internet path. Measured over ${r.seconds} s with your own audio, muted.</span>`
        : nothing}
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-setup-check': TuttiSetupCheck;
  }
}
