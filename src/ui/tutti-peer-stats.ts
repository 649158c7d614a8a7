// <tutti-peer-stats>: one remote peer's connection panel (main thread): quality label, estimated
// one-way delay, every per-peer stat of the network worker, sparklines of buffer fill and IFDV over
// the last minute, and the peer loopback ("Measure round trip"). Reads the engine's StatsRecorder;
// definitions of every figure are in docs/MEASUREMENT.md.

import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { OUTPUT_CLOCK_SETTLE_S, QUANTUM_MS } from '../shared/constants.ts';
import type { PeerStats } from '../shared/worker-protocol.ts';
import type { AudioEngine } from '../engine/audio-engine.ts';
import { oneWayDelay, quality, qualityInput, recentLatency } from './quality.ts';
import { StatsRenderController } from './stats-render-controller.ts';
import './tutti-quality.ts';
import './tutti-sparkline.ts';

/** Seconds of history in the sparklines. */
export const SPARK_SECONDS = 60;

@customElement('tutti-peer-stats')
export class TuttiPeerStats extends LitElement {
  static override styles = css`
    :host { display: block; font-size: 13px; color: #c4d0dc; }
    .head { display: flex; align-items: center; gap: 10px; flex-wrap: wrap; }
    summary { cursor: pointer; color: #9fb0c0; min-height: 44px; display: inline-flex; align-items: center; }
    dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 8px 0; font: 12px ui-monospace, monospace; }
    dt { color: #9fb0c0; }
    dd { margin: 0; }
    .sparks { display: grid; gap: 6px; margin: 6px 0; }
    .sparks label { display: grid; grid-template-columns: 10em max-content; justify-content: start; align-items: center; gap: 8px; color: #9fb0c0; font-size: 12px; }
    button { min-height: 44px; padding: 0 10px; border-radius: 6px; border: 1px solid #3a4857; background: #222d39; color: inherit; font: inherit; cursor: pointer; }
    button[aria-pressed='true'] { background: #2f5d7d; border-color: #6cb6ff; }
  `;
  @property({ attribute: false }) engine: AudioEngine | undefined;
  @property() peerId = '';
  @state() private loopback = false;
  /** Re-renders after each stats message (1 Hz). */
  protected readonly recorder = new StatsRenderController(this, () => this.engine?.stats);

  private toggleLoopback(): void {
    this.loopback = !this.loopback;
    this.engine?.net.setLoopback(this.peerId, this.loopback);
  }

  override render() {
    const engine = this.engine;
    if (!engine) return nothing;
    const history = engine.stats.peerHistory(this.peerId, SPARK_SECONDS);
    const s = history.at(-1);
    if (!s) return html`<span class="head">Connection: waiting for stats…</span>`;
    const q = qualityInput(history);
    // Across two computers both figures carry their wall clocks' offset (docs/MEASUREMENT.md §1): one
    // far enough off makes them negative, and no delay is shown rather than a wrong one.
    const recent = recentLatency(history);
    const clocksOff = recent !== null && (recent.pipelineMs < 0 || (recent.speakerMs ?? 0) < 0);
    // Our output's first seconds date the speaker up to 30 ms off: no figure until they have passed.
    const measuring = recent !== null && recent.speakerMs === null && engine.hasOutputClock();
    const oneWay = recent === null || clocksOff || measuring ? null : oneWayDelay({ ...recent, ...engine.deviceLatency() });
    const kbpsOut = engine.stats.latest()?.kbpsOut;
    return html`
      <div class="head">
        <tutti-quality .quality=${q ? quality(q) : null}></tutti-quality>
        <span data-testid="one-way" title=${oneWay ? `their microphone → our playout ${ms(oneWay.pipelineMs)} (measured) + our output device ${ms(oneWay.outputMs)} (${oneWay.outputFrom === 'output clock' ? "measured by the device's clock" : 'as the browser reports it'})` : clocksOff ? "the two computers' clocks disagree by more than the delay: set both to network time" : measuring ? `timing our output device: shown once it has played ${OUTPUT_CLOCK_SETTLE_S} s (before that its clock reads up to 30 ms off)` : 'waiting for audio'}>
          One-way ≈ ${oneWay ? ms(oneWay.totalMs) : '–'}</span>
        <button aria-pressed=${String(this.loopback)} @click=${this.toggleLoopback}
          title="Ask this peer's network worker to echo your stream and time an impulse through it">Measure round trip</button>
        ${this.loopback
          ? html`<span data-testid="loopback">${s.loopbackRttMs === null ? 'round trip: measuring…' : `round trip ${ms(s.loopbackRttMs)} · one-way ≈ ${ms(s.loopbackRttMs / 2)}`}</span>`
          : nothing}
      </div>
      <details>
        <summary>Connection details</summary>
        <div class="sparks">
          <label>Buffer fill (quanta)
            <tutti-sparkline data-testid="spark-fill" label="Jitter-buffer fill" unit="q" min-scale="4"
              .values=${history.map((p) => p.fill.avg)} .reference=${s.fill.target} .capacity=${SPARK_SECONDS}></tutti-sparkline></label>
          <label>IFDV p95 (ms)
            <tutti-sparkline data-testid="spark-ifdv" label="Inter-frame delay variation p95" unit="ms" min-scale="2"
              .values=${history.map((p) => p.ifdvMs?.p95 ?? null)} .capacity=${SPARK_SECONDS}></tutti-sparkline></label>
        </div>
        <dl data-testid="peer-stats-table">${rows(s, kbpsOut).map(([k, v]) => html`<dt>${k}</dt><dd data-stat=${k}>${v}</dd>`)}</dl>
      </details>
    `;
  }
}

function ms(x: number): string {
  return `${x.toFixed(1)} ms`;
}

function countPct(n: number, pct: number): string {
  return `${n} (${pct.toFixed(2)} %)`;
}

/** The table rows, label → formatted value. */
function rows(s: PeerStats, kbpsOut: number | undefined): [string, string][] {
  return [
    ['Buffer fill', `held ${s.fill.held.toFixed(1)} · avg ${s.fill.avg.toFixed(1)} · min ${s.fill.min.toFixed(1)} · target ${s.fill.target} quanta (${ms(s.fill.target * QUANTUM_MS)})${s.fill.relief > 0 ? ` · ${s.fill.relief.toFixed(1)} below it while their audio arrives late` : ''}`],
    ['Received', `${s.received} (${s.framesPerSecond} frames/s)`],
    ['Late', countPct(s.late, s.percent.late)],
    ['Lost', countPct(s.lost, s.percent.lost)],
    ['Duplicates', countPct(s.duplicates, s.percent.duplicates)],
    ['Rejected', countPct(s.rejected, s.percent.rejected) + (Object.keys(s.rejectedBy).length ? ` ${JSON.stringify(s.rejectedBy)}` : '')],
    ['Concealed', `${s.concealed} quanta`],
    ['Recovered', `${s.recovered} frames`],
    ['Underruns', `${s.underruns}`],
    ['Trimmed', `${s.trimmed} quanta`],
    ['RTT', s.rttMs === null ? '–' : ms(s.rttMs)],
    ['IFDV', s.ifdvMs ? `p50 ${s.ifdvMs.p50.toFixed(2)} · p95 ${s.ifdvMs.p95.toFixed(2)} · max ${s.ifdvMs.max.toFixed(2)} ms` : '–'],
    ['Added latency', s.latencyMs ? `p50 ${ms(s.latencyMs.p50)} · p99 ${ms(s.latencyMs.p99)}` : '–'],
    ['Bitrate in', `${s.kbpsIn.toFixed(0)} kbit/s${s.bits === null ? '' : ` · ${s.bits}-bit`}`],
    ['Bitrate out', kbpsOut === undefined ? '–' : `${kbpsOut.toFixed(0)} kbit/s`],
    ['Send backlog', `${s.bufferedAmount} B`],
    ['Sending', `${s.sendMono ? 'mono mixdown' : 'full'}, ${s.sendBits}-bit, ${s.sendRedundancy} redundant frame${s.sendRedundancy === 1 ? '' : 's'}${s.sendDropped ? ` · ${s.sendDropped} frames dropped (link congested)` : ''}`],
    ['Clock drift', `${s.driftPpm === null ? `measuring (${s.driftSeconds} of 60 s)` : `${s.driftPpm.toFixed(0)} ppm over ${s.driftSeconds} s`} (rate ${s.rate.toFixed(5)})`],
  ];
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-peer-stats': TuttiPeerStats;
  }
}
