// <tutti-recorder>: record a take (in the room: your input, each participant as you hear them, and
// the mix) and the list of takes on this device (in the room and on the join screen): elapsed
// time, size and storage left while recording, a warning before the storage runs out, and per take
// its tracks to download (heard tracks also shifted by their one-way delay) and a delete button.
// The work happens in the recorder worker (src/engine/recorder-bridge.ts); this view only shows its state.

import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { AudioEngine } from '../engine/audio-engine.ts';
import type { RecorderBridge } from '../engine/recorder-bridge.ts';
import type { TrackRegistry } from '../room/track-registry.ts';
import type { TakeInfo, TrackInfo } from '../shared/recorder-protocol.ts';
import { clock, megabytes } from './take-format.ts';

@customElement('tutti-recorder')
export class TuttiRecorder extends LitElement {
  static override styles = css`
    :host { display: block; }
    .row { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
    button { font: inherit; min-height: 44px; padding: 0 14px; border-radius: 6px; border: 1px solid #3a4857; background: #18212b; color: #e8eef4; cursor: pointer; }
    button[aria-pressed='true'] { background: #7a1f1f; border-color: #c44; }
    button:focus-visible, summary:focus-visible { outline: 2px solid #6cb6ff; outline-offset: 2px; }
    .rec { color: #ff8a8a; font-variant-numeric: tabular-nums; }
    .note { color: #9fb0c0; margin: 0; }
    .notice { color: #ffd58a; margin: 4px 0; }
    details { border: 1px solid #3a4857; border-radius: 6px; padding: 4px 12px; margin-top: 8px; }
    summary { cursor: pointer; min-height: 44px; line-height: 44px; }
    ul { list-style: none; padding: 0; margin: 0 0 8px; display: grid; gap: 8px; }
    li { display: grid; gap: 4px; }
  `;

  @property({ attribute: false }) recorder: RecorderBridge | undefined;
  /** The engine whose input and playback a take records (in the room), or undefined (list only). */
  @property({ attribute: false }) engine: AudioEngine | undefined;
  /** The room's participants' track numbers. */
  @property({ attribute: false }) tracks: TrackRegistry | undefined;
  /** The take's title: the room's name. */
  @property() takeTitle = '';
  private readonly onChange = (): void => this.requestUpdate();
  private watched: RecorderBridge | undefined;

  override updated(): void {
    if (this.watched === this.recorder) return;
    this.watched?.removeEventListener('change', this.onChange);
    this.watched = this.recorder;
    this.watched?.addEventListener('change', this.onChange);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.watched?.removeEventListener('change', this.onChange);
    this.watched = undefined;
  }

  override render() {
    const r = this.recorder;
    if (!r) return nothing;
    const engine = this.engine;
    const tracks = this.tracks;
    const st = r.status;
    return html`
      ${engine && tracks
        ? html`<div class="row">
            <button aria-pressed=${String(r.recording !== null)} @click=${() => (r.recording ? void r.stop() : r.start(engine, tracks, this.takeTitle))}>
              ${r.recording ? 'Stop recording' : 'Record a take'}</button>
            ${r.recording
              ? html`<span class="rec" data-testid="recording-status">● ${clock(st?.seconds ?? 0)} · ${megabytes(st?.bytes ?? 0)}${st?.storageLeftBytes != null ? html` · ${megabytes(st.storageLeftBytes)} free` : nothing}</span>`
              : html`<span class="note">Records your input (dry), each participant as you hear them, and the mix: 24-bit WAVs on this device, lined up.</span>`}
          </div>`
        : nothing}
      ${st?.warning ? html`<p class="notice" role="alert">${st.warning}</p>` : nothing}
      ${r.notice ? html`<p class="notice" role="status" data-testid="recorder-notice">${r.notice}</p>` : nothing}
      ${r.takes.length
        ? html`<details open>
            <summary>Takes on this device (${r.takes.length})</summary>
            <ul>${r.takes.map((t) => this.take(r, t))}</ul>
          </details>`
        : nothing}`;
  }

  private take(r: RecorderBridge, t: TakeInfo) {
    const frames = t.tracks[0]?.frames ?? 0;
    const live = t.id === r.recording;
    return html`<li data-take=${t.id}>
      <span>${t.title} · ${t.startedAt ? new Date(t.startedAt).toLocaleString() : ''} · ${clock(frames / t.sampleRate)}${t.state === 'recovered' ? ' · recovered after the page closed' : ''}${t.endedBy === 'quota' ? ' · stopped: storage full' : ''}${t.gaps.length ? ` · ${t.gaps.length} gap(s) of silence` : ''}</span>
      ${live
        ? html`<span class="note">recording…</span>`
        : html`<div class="row">
            ${t.tracks.map((tr) => html`<button @click=${() => void r.download(t, tr)} title=${trackTitle(tr)}>Download ${tr.name} (${megabytes(tr.bytes)})</button>`)}
            <button @click=${() => r.downloadArchive(t, false)} title="Every track and the take's details (take.json) in one ZIP">Download all (ZIP)</button>
            ${t.tracks.some((tr) => tr.oneWayMs !== undefined)
              ? html`<button @click=${() => r.downloadArchive(t, true)} title="Each participant's track moved earlier by their one-way delay to you: lined up with when they played it, not when you heard it">Download all as played (ZIP)</button>`
              : nothing}
            <button @click=${() => r.delete(t.id)}>Delete take</button>
          </div>`}
    </li>`;
  }
}

/** What a track holds, for its button's tooltip. */
function trackTitle(tr: TrackInfo): string {
  if (tr.kind === 'mix') return 'What your speaker played: everyone, at your mix settings';
  if (tr.kind !== 'heard') return 'Your input, dry (before the input gain)';
  const spans = tr.spans ?? [];
  const concealed = spans.filter((s) => s.kind === 'concealed' || s.kind === 'underrun').length;
  return `${tr.name} as you heard them, before your volume${tr.oneWayMs !== undefined ? `; ${tr.oneWayMs} ms from their microphone to your speaker` : ''}${concealed ? `; ${concealed} concealed span(s)` : ''}`;
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-recorder': TuttiRecorder;
  }
}
