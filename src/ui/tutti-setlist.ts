// <tutti-setlist>: the room's setlist / assignments (a Y.Array): add, check off, remove.
// Every change goes through the Room, so it syncs to everyone who holds the password.

import { LitElement, css, html } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { Room, SetlistItem } from '../room/room.ts';

@customElement('tutti-setlist')
export class TuttiSetlist extends LitElement {
  static override styles = css`
    :host { display: grid; gap: 6px; }
    h2 { font-size: 14px; font-weight: 600; color: #c4d0dc; margin: 0; }
    ul { list-style: none; margin: 0; padding: 0; display: grid; gap: 4px; }
    li { display: flex; align-items: center; gap: 8px; min-height: 44px; }
    li label { flex: 1; display: flex; align-items: center; gap: 10px; min-height: 44px; cursor: pointer; overflow-wrap: anywhere; }
    li.done label span { text-decoration: line-through; color: #9fb0c0; }
    input[type='checkbox'] { width: 24px; height: 24px; margin: 0; }
    form { display: flex; gap: 8px; }
    input[type='text'] { flex: 1; min-width: 0; font: inherit; padding: 10px; border-radius: 6px; border: 1px solid #3a4857; background: #10161d; color: inherit; }
    button { font: inherit; min-height: 44px; min-width: 44px; padding: 0 12px; border-radius: 6px; border: 1px solid #3a4857; background: #222d39; color: inherit; cursor: pointer; }
    :focus-visible { outline: 2px solid #6cb6ff; outline-offset: 2px; }
  `;
  @property({ attribute: false }) room: Room | undefined;
  @state() private items: SetlistItem[] = [];
  private observed: Room | undefined;
  private readonly onChange = (): void => {
    this.items = this.room?.setlist.toArray() ?? [];
  };

  override willUpdate(): void {
    if (this.observed !== this.room) {
      this.observed?.setlist.unobserve(this.onChange);
      this.observed = this.room;
      this.room?.setlist.observe(this.onChange);
      this.onChange();
    }
  }
  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.observed?.setlist.unobserve(this.onChange);
    this.observed = undefined;
  }

  private add(e: Event): void {
    e.preventDefault();
    const input = this.renderRoot.querySelector<HTMLInputElement>('input[name=item]')!;
    this.room?.addItem(input.value);
    input.value = '';
  }

  override render() {
    return html`
      <h2 id="setlist-h">Setlist and assignments</h2>
      <ul aria-labelledby="setlist-h">
        ${this.items.map((it) => html`<li class=${it.done ? 'done' : ''}>
          <label><input type="checkbox" .checked=${it.done} @change=${() => this.room?.toggleItem(it.id)} /><span>${it.text}</span></label>
          <button aria-label=${`Remove ${it.text}`} @click=${() => this.room?.removeItem(it.id)}>✕</button>
        </li>`)}
      </ul>
      <form @submit=${this.add}>
        <input type="text" name="item" maxlength="200" aria-label="New setlist item" placeholder="Piece or exercise" />
        <button type="submit">Add</button>
      </form>
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-setlist': TuttiSetlist;
  }
}
