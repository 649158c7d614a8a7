// <tutti-devices>: the input and output device pickers of the room view (a DeviceChoice's state),
// and which of the input's channels to send.
// A choice switches at once, in the room; the lists follow plugging; a notice says when a device
// went away or a switch failed. Where the browser cannot choose an output, the output picker is
// replaced by the reason.

import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { AudioDevice } from '../engine/devices.ts';
import type { DeviceChoice } from '../room/device-choice.ts';
import { INPUT_CHANNEL_CHOICES, INPUT_CHANNEL_LABELS } from '../shared/input-channels.ts';

@customElement('tutti-devices')
export class TuttiDevices extends LitElement {
  static override styles = css`
    :host { display: block; }
    details { border: 1px solid #3a4857; border-radius: 6px; padding: 4px 12px; }
    summary { cursor: pointer; min-height: 44px; line-height: 44px; }
    .body { display: grid; gap: 8px; padding-bottom: 8px; }
    label { display: grid; gap: 4px; }
    select { font: inherit; min-height: 44px; border-radius: 6px; border: 1px solid #3a4857; background: #18212b; color: #e8eef4; max-width: 100%; }
    select:focus-visible, summary:focus-visible { outline: 2px solid #6cb6ff; outline-offset: 2px; }
    .note { color: #9fb0c0; margin: 0; }
    .notice { color: #ffd58a; margin: 0; }
  `;

  @property({ attribute: false }) devices: DeviceChoice | undefined;
  private readonly onChange = (): void => this.requestUpdate();
  private watched: DeviceChoice | undefined;

  override updated(): void {
    if (this.watched === this.devices) return;
    this.watched?.removeEventListener('change', this.onChange);
    this.watched = this.devices;
    this.watched?.addEventListener('change', this.onChange);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.watched?.removeEventListener('change', this.onChange);
    this.watched = undefined;
  }

  private picker(name: string, label: string, list: readonly AudioDevice[], current: AudioDevice, choose: (d: AudioDevice) => void) {
    return html`<label>${label}
      <select name=${name} @change=${(e: Event) => {
        const d = list[Number((e.target as HTMLSelectElement).value)];
        if (d) choose(d);
      }}>
        ${list.map((d, i) => html`<option value=${i} .selected=${d.id === current.id}>${d.label}</option>`)}
      </select>
    </label>`;
  }

  override render() {
    const d = this.devices;
    if (!d) return nothing;
    return html`<details ?open=${d.notice !== ''}>
      <summary>Audio devices: ${d.input.label} → ${d.output.label}</summary>
      <div class="body">
        ${d.notice ? html`<p class="notice" role="status" data-testid="device-notice">${d.notice}</p>` : nothing}
        ${this.picker('input-device', 'Input (microphone or interface)', d.lists.inputs, d.input, (x) => void d.chooseInput(x))}
        ${d.inputChannelsUnavailable
          ? html`<p class="note" data-testid="input-channels-unavailable">${d.inputChannelsUnavailable}</p>`
          : html`<label>Input channels to send
              <select name="input-channels" @change=${(e: Event) => void d.chooseInputChannels(INPUT_CHANNEL_CHOICES[Number((e.target as HTMLSelectElement).value)] ?? 'both')}>
                ${INPUT_CHANNEL_CHOICES.map((c, i) => html`<option value=${i} .selected=${c === d.inputChannels}>${INPUT_CHANNEL_LABELS[c]}</option>`)}
              </select>
            </label>
            ${d.inputChannelCount < 2 ? html`<p class="note">This input gives one channel: every choice sends it.</p>` : nothing}`}
        ${d.outputUnavailable
          ? html`<p class="note" data-testid="output-unavailable">${d.outputUnavailable}</p>`
          : this.picker('output-device', 'Output (speakers or headphones)', d.lists.outputs, d.output, (x) => void d.chooseOutput(x))}
        <p class="note">Switching keeps you in the room; the others keep hearing you. This computer remembers the choice.</p>
      </div>
    </details>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-devices': TuttiDevices;
  }
}
