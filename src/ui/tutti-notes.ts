// <tutti-notes>: the room's lesson notes, a plain textarea bound to the room's Y.Text. Typing in
// it never toggles mute (the app ignores Space from text fields).

import { LitElement, css, html, type PropertyValues } from 'lit';
import { customElement, property, query } from 'lit/decorators.js';
import type * as Y from 'yjs';
import { bindTextarea } from '../room/text-binding.ts';

@customElement('tutti-notes')
export class TuttiNotes extends LitElement {
  static override styles = css`
    :host { display: grid; gap: 4px; }
    label { font-size: 14px; color: #c4d0dc; }
    textarea { font: 15px/1.4 system-ui, sans-serif; min-height: 8em; resize: vertical; padding: 10px; border-radius: 6px; border: 1px solid #3a4857; background: #10161d; color: inherit; box-sizing: border-box; width: 100%; }
    textarea:focus-visible { outline: 2px solid #6cb6ff; outline-offset: 2px; }
  `;
  @property({ attribute: false }) text: Y.Text | undefined;
  @query('textarea') private area!: HTMLTextAreaElement;
  private unbind: (() => void) | null = null;

  override updated(changed: PropertyValues<this>): void {
    if (changed.has('text')) {
      this.unbind?.();
      this.unbind = this.text ? bindTextarea(this.text, this.area) : null;
    }
  }
  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.unbind?.();
    this.unbind = null;
  }

  override render() {
    return html`<label for="notes">Lesson notes</label>
      <textarea id="notes" name="notes" spellcheck="true" placeholder="Notes for this lesson, shared with the room"></textarea>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-notes': TuttiNotes;
  }
}
