// <tutti-peer-strip>: one remote peer's channel strip: name, connection, meter, volume, mute,
// and its receive counters. Emits `peer-mix` when the listener changes the mix.

import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { PeerStats } from '../shared/worker-protocol.ts';
import type { RemoteMember } from '../room/audio-mesh.ts';
import type { AudioEngine } from '../engine/audio-engine.ts';
import './tutti-meter.ts';
import './tutti-peer-stats.ts';

export interface PeerMixDetail {
  peerId: string;
  gain: number;
  muted: boolean;
}

/**
 * @fires peer-mix - PeerMixDetail, when volume or mute changes
 */
@customElement('tutti-peer-strip')
export class TuttiPeerStrip extends LitElement {
  static override styles = css`
    :host { display: grid; gap: 6px; padding: 10px 12px; border-radius: 8px; background: #18212b; }
    .row { display: flex; align-items: center; gap: 10px; flex-wrap: wrap; }
    .name { font-weight: 600; flex: 1; min-width: 8em; }
    .state { font-size: 12px; color: #9fb0c0; }
    .stats { font: 12px ui-monospace, monospace; color: #9fb0c0; }
    input[type='range'] { flex: 1; min-width: 100px; min-height: 44px; margin: 0; }
    .quality { font-size: 12px; padding: 2px 8px; border-radius: 10px; background: #2a3642; }
    .quality.good { background: #1f4d3b; } .quality.fair { background: #5a4a1a; } .quality.poor { background: #5a2226; }
    :focus-visible { outline: 2px solid #6cb6ff; outline-offset: 2px; }
    @media (max-width: 600px) { .stats { display: none; } :host { padding: 8px; } }
    button { min-height: 44px; min-width: 64px; border-radius: 6px; border: 1px solid #3a4857; background: #222d39; color: inherit; font: inherit; }
    button[aria-pressed='true'] { background: #7a2e2e; border-color: #a33; }
  `;
  @property({ attribute: false }) member!: RemoteMember;
  @property({ attribute: false }) stats: PeerStats | undefined;
  /** For the connection panel (stats history, loopback); none, no panel. */
  @property({ attribute: false }) engine: AudioEngine | undefined;
  @property({ attribute: false }) level: (slot: number) => number = () => 0;
  @property({ type: Number }) gain = 1;
  @property({ type: Boolean }) muted = false;

  private emit(): void {
    this.dispatchEvent(new CustomEvent<PeerMixDetail>('peer-mix', { detail: { peerId: this.member.id, gain: this.gain, muted: this.muted }, bubbles: true, composed: true }));
  }

  override render() {
    const s = this.stats;
    const name = this.member.name;
    const q = quality(s);
    return html`
      <div class="row">
        <span class="name">${name}</span>
        <span class="state">${this.member.role}${this.member.instrument ? ` · ${this.member.instrument}` : ''}${this.member.selfMuted ? ' · muted' : ''}</span>
        <span class="state" data-testid="peer-state">${this.member.audio ? 'audio connected' : this.member.connection}</span>
        ${q ? html`<span class=${`quality ${q}`} role="img" aria-label=${`Connection ${q}`} title="Share of frames arriving in time">${q}</span>` : nothing}
      </div>
      <tutti-meter .read=${() => (s ? this.level(s.slot) : 0)} label=${`${name} level`}></tutti-meter>
      <div class="row">
        <label for="vol">Volume</label>
        <input id="vol" type="range" min="0" max="2" step="0.01" .value=${String(this.gain)} aria-label=${`Volume of ${name}`}
          @input=${(e: Event) => { this.gain = Number((e.target as HTMLInputElement).value); this.emit(); }} />
        <button aria-pressed=${String(this.muted)} aria-label=${`Mute ${name}`}
          @click=${() => { this.muted = !this.muted; this.emit(); }}>${this.muted ? 'Muted' : 'Mute'}</button>
      </div>
      ${s
        ? html`<div class="stats" data-testid="peer-stats">
            ${s.framesPerSecond} frames/s · depth ${s.depth} · late ${s.late} · lost ${s.lost} · dup ${s.duplicates} · rejected ${s.rejected}
            ${s.latencyMs ? html` · latency ${s.latencyMs.p50.toFixed(1)} ms` : nothing}
          </div>`
        : nothing}
      ${this.engine ? html`<tutti-peer-stats .engine=${this.engine} .peerId=${this.member.id}></tutti-peer-stats>` : nothing}
    `;
  }
}

/** Connection quality at a glance, from the receive rate and the playout misses of the last tick. */
function quality(s: PeerStats | undefined): 'good' | 'fair' | 'poor' | null {
  if (!s) return null;
  if (s.channelState !== 'open') return 'poor';
  const ratio = s.framesPerSecond / 375;
  return ratio >= 0.95 ? 'good' : ratio >= 0.7 ? 'fair' : 'poor';
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-peer-strip': TuttiPeerStrip;
  }
  interface HTMLElementEventMap {
    'peer-mix': CustomEvent<PeerMixDetail>;
  }
}
