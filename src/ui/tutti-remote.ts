// <tutti-remote>: a phone paired to one desktop participant changes that participant's mixer
// and starts and stops takes on their device (the take in progress shows from their awareness).
// It reads the target's mixer from the target's awareness (MixState) and writes requests into
// the room's Y.Map `control` under `<target id>:<what>`; the target's page applies them through
// its engine bridge. No audio, no microphone here.

import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { MAX_DEPTH, MIN_DEPTH, QUANTUM_MS } from '../shared/constants.ts';
import type { ControlRequest, MemberState } from '../shared/signaling-protocol.ts';
import type { Room } from '../room/room.ts';
import { clock, megabytes } from './take-format.ts';

@customElement('tutti-remote')
export class TuttiRemote extends LitElement {
  static override styles = css`
    :host { display: grid; gap: 12px; }
    .card { display: grid; gap: 8px; padding: 12px; border-radius: 8px; background: #18212b; }
    label { display: grid; gap: 4px; font-size: 14px; color: #c4d0dc; }
    .row { display: flex; gap: 8px; align-items: center; }
    .row label { flex: 1; }
    .row button { flex: none; white-space: nowrap; }
    input[type='range'] { width: 100%; min-height: 44px; margin: 0; }
    button { font: inherit; min-height: 44px; min-width: 64px; padding: 0 12px; border-radius: 6px; border: 1px solid #3a4857; background: #222d39; color: inherit; }
    button[aria-pressed='true'] { background: #7a2e2e; border-color: #a33; }
    :focus-visible { outline: 2px solid #6cb6ff; outline-offset: 2px; }
    .muted-note { color: #9fb0c0; font-size: 14px; }
    .rec { color: #ff8a8a; font-variant-numeric: tabular-nums; }
  `;
  @property({ attribute: false }) room: Room | undefined;
  @property({ type: Number }) target = 0;
  @property({ attribute: false }) roster = new Map<number, MemberState>();
  private seq = 0;

  private send(what: string, req: Omit<ControlRequest, 'seq' | 'from'>): void {
    if (!this.room) return;
    this.room.control.set(`${this.target}:${what}`, { seq: ++this.seq, from: this.room.clientId, ...req });
  }

  override render() {
    const t = this.roster.get(this.target);
    if (!t || t.kind !== 'participant') {
      return html`<p class="muted-note" role="status">Waiting for the participant this remote controls to appear in the room…</p>`;
    }
    const mix = t.mix ?? { master: 1, depth: 8, peers: {} };
    const peers = [...this.roster].filter(([id, m]) => id !== this.target && m.kind === 'participant');
    return html`
      <div class="card">
        <strong data-testid="remote-target">Controlling ${t.name}${t.muted ? ' (muted)' : ''}</strong>
        <label>Output volume of ${t.name}
          <input type="range" min="0" max="2" step="0.01" .value=${String(mix.master)}
            @input=${(e: Event) => this.send('master', { master: Number((e.target as HTMLInputElement).value) })} />
        </label>
        <label>Jitter buffer of ${t.name}: ${mix.adaptive
            ? `automatic, now ${t.quality ? `${t.quality.depth} (${(t.quality.depth * QUANTUM_MS).toFixed(1)} ms)` : '…'}; moving this sets it by hand`
            : `${mix.depth} (${(mix.depth * QUANTUM_MS).toFixed(1)} ms)`}
          <input type="range" min=${MIN_DEPTH} max=${MAX_DEPTH} step="1" .value=${String(mix.adaptive && t.quality ? t.quality.depth : mix.depth)}
            @input=${(e: Event) => this.send('depth', { depth: Number((e.target as HTMLInputElement).value) })} />
        </label>
      </div>
      <div class="card row">
        <button aria-pressed=${String(!!t.recording)} @click=${() => this.send('record', { record: !t.recording })}>${t.recording ? 'Stop recording' : 'Record a take'}</button>
        ${t.recording
          ? html`<span class="rec" role="status" data-testid="remote-recording">● ${clock(t.recording.seconds)} · ${megabytes(t.recording.bytes)}${t.recording.leftBytes !== null ? ` · ${megabytes(t.recording.leftBytes)} free` : ''}</span>`
          : html`<span class="muted-note">On ${t.name}'s device: their input, each participant as they hear them, and the mix.</span>`}
      </div>
      ${peers.length === 0 ? html`<p class="muted-note">Nobody else to mix yet.</p>` : nothing}
      ${peers.map(([id, m]) => {
        const p = mix.peers[String(id)] ?? { gain: 1, muted: false };
        return html`<div class="card row">
          <label>Volume of ${m.name}
            <input type="range" min="0" max="2" step="0.01" .value=${String(p.gain)}
              @input=${(e: Event) => this.send(`peer:${id}`, { peer: { id: String(id), gain: Number((e.target as HTMLInputElement).value), muted: p.muted } })} />
          </label>
          <button aria-pressed=${String(p.muted)} aria-label=${`Mute ${m.name}`}
            @click=${() => this.send(`peer:${id}`, { peer: { id: String(id), gain: p.gain, muted: !p.muted } })}>${p.muted ? 'Muted' : 'Mute'}</button>
        </div>`;
      })}
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-remote': TuttiRemote;
  }
}
