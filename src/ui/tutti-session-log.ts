// <tutti-session-log>: the room's session log (src/room/session-log.ts) behind a disclosure: the
// latest entries, newest first, and a button that saves the whole log as a text file. Re-renders
// when `count` changes (the log grows in place).

import { LitElement, css, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { SessionLog } from '../room/session-log.ts';
import { downloadText, fileStamp } from './download.ts';

/** Entries shown in the view (the export has them all). */
const SHOWN = 12;

@customElement('tutti-session-log')
export class TuttiSessionLog extends LitElement {
  static override styles = css`
    :host { display: block; }
    summary { cursor: pointer; min-height: 44px; display: flex; align-items: center; }
    ol { list-style: none; padding: 0; margin: 4px 0 8px; display: grid; gap: 2px; font-size: 14px; color: #c4d0dc; }
    time { color: #9fb0c0; font-variant-numeric: tabular-nums; margin-right: 6px; }
    button { min-height: 44px; }
  `;
  @property({ attribute: false }) log: SessionLog | undefined;
  /** Entries so far: a new value re-renders. */
  @property({ type: Number }) count = 0;
  @property() room = '';

  private export(): void {
    if (!this.log) return;
    const safe = this.room.replace(/[^\w-]+/g, '_').slice(0, 40) || 'room';
    downloadText(`tutti-session-${safe}-${fileStamp()}.txt`, 'text/plain;charset=utf-8', this.log.text(this.room));
  }

  override render() {
    const entries = this.log?.entries ?? [];
    const latest = entries.slice(-SHOWN).reverse();
    return html`<details>
      <summary>Session log (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'})</summary>
      <ol data-testid="session-log">
        ${latest.map((e) => html`<li data-kind=${e.kind}><time>${new Date(e.atMs).toLocaleTimeString()}</time>${e.text}</li>`)}
      </ol>
      <button @click=${() => this.export()}>Export session log</button>
    </details>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-session-log': TuttiSessionLog;
  }
}
