// <tutti-connections>: everyone's connection at a glance, the same on every member's view. One
// light per pair of participants (the worse of how each hears the other: src/ui/connection-lights.ts),
// its reasons on hover (title) or tap (the row opens), and what each participant reports of their
// own end (input level, clipping, depth). Reads the roster (awareness) only: no engine needed.

import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { MemberState } from '../shared/signaling-protocol.ts';
import { memberNotes, pairLights, type Light } from './connection-lights.ts';

const WORD: Record<Light, string> = { green: 'clean', amber: 'some glitches', red: 'struggling', unknown: 'measuring…' };

@customElement('tutti-connections')
export class TuttiConnections extends LitElement {
  static override styles = css`
    :host { display: block; }
    ul { list-style: none; padding: 0; margin: 0; display: grid; gap: 4px; }
    summary { cursor: pointer; min-height: 44px; display: flex; align-items: center; gap: 8px; }
    summary:focus-visible { outline: 2px solid #6cb6ff; outline-offset: 2px; }
    .dot { width: 14px; height: 14px; border-radius: 50%; flex: none; background: #55606b; }
    .green { background: #2fbf71; }
    .amber { background: #e0b020; }
    .red { background: #e04848; }
    .why { margin: 0 0 8px 22px; padding: 0; color: #c4d0dc; font-size: 14px; display: grid; gap: 2px; }
    .word { color: #9fb0c0; font-size: 14px; }
    .note { color: #9fb0c0; font-size: 14px; margin: 2px 0; }
    .clip { color: #ff8a8a; }
  `;
  @property({ attribute: false }) roster = new Map<number, MemberState>();

  override render() {
    const pairs = pairLights(this.roster);
    const notes = memberNotes(this.roster);
    if (pairs.length === 0) return html`<p class="note">Connections show here once two participants are in the room.</p>`;
    return html`<ul data-testid="connections">
        ${pairs.map(
          (p) => html`<li data-pair=${[...p.names].sort().join('–')} data-light=${p.light}>
            <details>
              <summary title=${p.reasons.join('\n')}><span class=${`dot ${p.light}`} aria-hidden="true"></span>${p.names[0]} ↔ ${p.names[1]} <span class="word">${WORD[p.light]}</span></summary>
              <ul class="why">${p.reasons.map((r) => html`<li>${r}</li>`)}</ul>
            </details>
          </li>`,
        )}
      </ul>
      ${notes.map((n) => (n.text ? html`<p class=${n.clipping ? 'note clip' : 'note'} data-member-note=${n.name}>${n.name}: ${n.text}</p>` : nothing))}`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-connections': TuttiConnections;
  }
}
