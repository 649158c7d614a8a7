// <tutti-room>: the room view of a participant. Access line, your own strip (mute, input gain,
// jitter buffer, redundancy, output volume, mono/stereo, audio devices, meters), one strip per peer, roster,
// the metronome, notes, setlist, sharing and the room's settings. Shows a Session's state and calls its methods;
// fires `leave-room` and `retry-password`.

import { LitElement, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { MAX_DEPTH, MIN_DEPTH, QUANTUM_MS } from '../shared/constants.ts';
import { MAX_ROOM_TITLE } from '../shared/signaling-protocol.ts';
import { formatOfBits, payloadKbps as sendKbps } from '../shared/wire.ts';
import type { PeerStats, StatsMessage } from '../shared/worker-protocol.ts';
import { fetchOpenRooms } from '../room/open-rooms.ts';
import type { Session } from '../room/session.ts';
import { accessStatus } from './access-status.ts';
import { SessionWatch } from './session-watch.ts';
import { viewStyles } from './tutti-app-styles.ts';
import type { PeerMixDetail } from './tutti-peer-strip.ts';
import './tutti-meter.ts';
import './tutti-lesson.ts';
import './tutti-peer-strip.ts';
import './tutti-notes.ts';
import './tutti-setlist.ts';
import './tutti-share.ts';
import './tutti-measure-tools.ts';
import './tutti-devices.ts';
import './tutti-recorder.ts';
import './tutti-connections.ts';
import './tutti-session-log.ts';
import './tutti-metronome.ts';
import { clockLabel } from './clock-label.ts';
import { outputNote, type OutputNote } from './output-dropouts.ts';
import { QUALITY_WINDOW } from './quality.ts';
import type { RecorderBridge } from '../engine/recorder-bridge.ts';

/**
 * @fires leave-room - the user leaves the room.
 * @fires retry-password - the password was wrong and the user wants to enter it again.
 */
@customElement('tutti-room')
export class TuttiRoom extends LitElement {
  static override styles = viewStyles;

  @property({ attribute: false }) session: Session | undefined;
  /** The page's recorder (takes of our input). */
  @property({ attribute: false }) recorder: RecorderBridge | undefined;
  @state() private pairing = false;
  /** The server keeps an open-rooms list (the listing setting is offered only then). */
  @state() private listingOffered = false;
  constructor() {
    super();
    new SessionWatch(this);
  }

  override connectedCallback(): void {
    super.connectedCallback();
    addEventListener('keydown', this.onKey);
    void fetchOpenRooms().then((l) => (this.listingOffered = l.enabled));
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    removeEventListener('keydown', this.onKey);
  }

  private readonly onKey = (e: KeyboardEvent): void => {
    // Space toggles mute, unless the user is typing or operating a control.
    const t = e.composedPath()[0] as HTMLElement | undefined;
    if (e.code !== 'Space' || (t && /^(INPUT|BUTTON|SELECT|TEXTAREA)$/.test(t.tagName))) return;
    e.preventDefault();
    this.session?.toggleMute();
  };

  private leave(): void {
    this.dispatchEvent(new CustomEvent('leave-room', { bubbles: true, composed: true }));
  }

  private retry(): void {
    this.dispatchEvent(new CustomEvent('retry-password', { bubbles: true, composed: true }));
  }

  private onPeerMix(e: CustomEvent<PeerMixDetail>): void {
    const { peerId, gain, muted } = e.detail;
    this.session?.setPeerMix(peerId, gain, muted);
  }

  private onListed(s: Session, listed: boolean): void {
    s.setListed(listed ? `${s.identity.name.trim()}'s room` : null);
  }

  private renderRoster(s: Session) {
    const selfId = s.room.clientId;
    return html`<section aria-labelledby="roster-h" class="card">
      <h2 id="roster-h">In the room</h2>
      <ul class="roster" data-testid="roster">
        ${[...s.roster].map(([id, m]) => html`<li>
          <strong>${m.name}</strong>${id === selfId ? ' (you)' : ''} · ${m.kind === 'remote' ? 'remote control' : m.role}${m.instrument ? ` · ${m.instrument}` : ''}
          ${m.kind === 'participant' ? html` · ${m.format}${m.muted ? ' · muted' : ''}` : nothing}
        </li>`)}
      </ul>
      <h3 class="sub">Connections</h3>
      <tutti-connections .roster=${s.roster}></tutti-connections>
      ${this.renderClock(s)}
      <tutti-session-log .log=${s.log} .count=${s.log.entries.length + s.log.dropped} .room=${s.identity.room}></tutti-session-log>
    </section>`;
  }

  private renderClock(s: Session) {
    const c = clockLabel(s.stats?.clock, s.stats?.peers ?? [], s.roster);
    return html`<p class="clock" data-testid="shared-clock" data-state=${c.state} title=${c.title}>${c.text}</p>`;
  }

  private renderSettings(s: Session) {
    const { room, password } = s.identity;
    const listed = s.listingTitle !== undefined;
    return html`<details class="card">
      <summary>Share and settings</summary>
      <tutti-share .room=${room} .password=${password}></tutti-share>
      <label>Room default jitter depth (applies to everyone)
        <input type="number" name="room-depth" min=${MIN_DEPTH} max=${MAX_DEPTH} .value=${String(s.roomDepth ?? s.choices.depth)}
          @change=${(e: Event) => s.setRoomDepth(Number((e.target as HTMLInputElement).value))} />
      </label>
      ${this.listingOffered || listed
        ? html`<label class="check"><input type="checkbox" name="listed" .checked=${listed}
              @change=${(e: Event) => this.onListed(s, (e.target as HTMLInputElement).checked)} />
              List this room on this server's open rooms (anyone who opens Tutti here sees it${password ? '; the password is still needed' : ''})</label>
            ${listed
              ? html`<label>Listed as
                  <input type="text" name="listing-title" maxlength=${MAX_ROOM_TITLE} .value=${s.listingTitle}
                    @change=${(e: Event) => s.setListed((e.target as HTMLInputElement).value.trim() || room)} />
                </label>`
              : nothing}`
        : nothing}
      <button aria-expanded=${String(this.pairing)} @click=${() => (this.pairing = !this.pairing)}>Pair a phone as remote control</button>
      ${this.pairing
        ? html`<p class="muted-note">Scan with the phone: it joins this room as a remote for you (no audio). The code holds the room password after #.</p>
            <tutti-share .room=${room} .password=${password} .remote=${s.room.clientId} label="Remote pairing link"></tutti-share>`
        : nothing}
    </details>`;
  }

  override render() {
    const s = this.session;
    const engine = s?.engine;
    if (!s || !engine) return nothing;
    const c = s.choices;
    const { room, password, name } = s.identity;
    const levels = () => engine.levels();
    const stats = s.stats;
    const byId = new Map<string, PeerStats>((stats?.peers ?? []).map((p) => [p.peerId, p]));
    const locked = s.access === 'wrong-password';
    return html`
      <section aria-label="Room ${room}">
        <div class="bar">
          <strong class="grow room-name">Room: ${room}${password ? ' 🔒' : ''}</strong>
          <button @click=${this.leave}>Leave</button>
        </div>
        ${accessStatus(s, () => this.retry())}
        <tutti-lesson .session=${s}></tutti-lesson>
        <div class="self">
          <div class="bar">
            <strong class="grow">You (${name})</strong>
            <button class="mute" aria-pressed=${String(c.muted)} @click=${() => s.toggleMute()} title="Space toggles mute">${c.muted ? 'Unmute' : 'Mute'}</button>
          </div>
          <tutti-meter .read=${() => levels().self} label="Your input level"></tutti-meter>
          <div class="controls">
            <label>Input gain: ${Math.round(c.inputGain * 100)} %
              <input type="range" name="input-gain" min="0" max="2" step="0.01" .value=${String(c.inputGain)}
                @input=${(e: Event) => s.setInputGain(Number((e.target as HTMLInputElement).value))} />
            </label>
            <label class="check"><input type="checkbox" name="adaptive" .checked=${c.adaptive}
                @change=${(e: Event) => s.setDepth(c.depth, (e.target as HTMLInputElement).checked)} /> Automatic jitter buffer</label>
            <label><span data-testid="depth-label">${depthLabel(c.adaptive, c.depth, stats)}</span>
              <input type="range" name="depth" min=${MIN_DEPTH} max=${MAX_DEPTH} step="1" .value=${String(c.depth)} ?disabled=${c.adaptive}
                @input=${(e: Event) => s.setDepth(Number((e.target as HTMLInputElement).value), false)} />
            </label>
            <label>Redundancy (room setting: everyone sends it)
              <select name="redundancy" @change=${(e: Event) => s.setRedundancy(Number((e.target as HTMLSelectElement).value))}>
                ${[0, 1, 2, 3].map((n) => html`<option value=${n} .selected=${c.redundancy === n}>${n === 0 ? 'Off' : `${n} frame${n > 1 ? 's' : ''}`} · ${sendKbps(c.channels, n, formatOfBits(c.bits))} kbit/s per peer</option>`)}
              </select>
            </label>
            <label>Output volume
              <input type="range" name="master" min="0" max="2" step="0.01" .value=${String(c.master)}
                @input=${(e: Event) => s.setMaster(Number((e.target as HTMLInputElement).value))} />
            </label>
            <label>Send
              <select name="send-channels" @change=${(e: Event) => s.setChannels((e.target as HTMLSelectElement).value === '1' ? 1 : 2)}>
                <option value="1" ?selected=${c.channels === 1}>Mono</option>
                <option value="2" ?selected=${c.channels === 2}>Stereo</option>
              </select>
            </label>
            <label>Resolution
              <select name="send-bits" @change=${(e: Event) => s.setBits((e.target as HTMLSelectElement).value === '24' ? 24 : 16)}>
                ${([16, 24] as const).map((b) => html`<option value=${b} ?selected=${c.bits === b}>${b}-bit · ${sendKbps(c.channels, c.redundancy, formatOfBits(b))} kbit/s per peer</option>`)}
              </select>
            </label>
            <label title="Two quanta per packet halve the packets this computer sends and receives handling: for a computer that cannot keep up (dropouts, a congested link on a quiet network), at 2.7 ms more latency for what you send.">Packets
              <select name="per-packet" @change=${(e: Event) => s.setPerPacket((e.target as HTMLSelectElement).value === '2' ? 2 : 1)}>
                <option value="1" ?selected=${c.perPacket === 1}>Every ${QUANTUM_MS.toFixed(1)} ms · lowest latency</option>
                <option value="2" ?selected=${c.perPacket === 2}>Every ${(2 * QUANTUM_MS).toFixed(1)} ms · half the packets, +${QUANTUM_MS.toFixed(1)} ms</option>
              </select>
            </label>
          </div>
          <tutti-devices .devices=${s.devices}></tutti-devices>
          <tutti-recorder .recorder=${this.recorder} .engine=${engine} .tracks=${s.tracks} .takeTitle=${s.identity.room}></tutti-recorder>
          <label>Mix output
            ${levels().clipped > 0 ? html`<span class="clip" title="The mix exceeded full scale and was clipped; turn the output or a peer down.">CLIP (${levels().clipped} samples)</span>` : nothing}
            <tutti-meter .read=${() => levels().master} label="Mix output level"></tutti-meter></label>
          ${speakerNote(outputNote(engine.stats.samples(QUALITY_WINDOW + 1)))}
          ${stats
            ? html`<span class="muted-note wide-only" data-testid="send-stats">Sending ${stats.sendFramesPerSecond} frames/s in ${stats.sendPacketsPerSecond} packets/s · worker ${stats.workerCpuMsPerSecond} ms/s</span>`
            : nothing}
        </div>
        <tutti-measure-tools .engine=${engine}></tutti-measure-tools>
        <div class="peers" @peer-mix=${this.onPeerMix}>
          ${s.members.map((m) => {
            const mix = c.mix.get(m.id);
            return html`<tutti-peer-strip data-peer=${m.id} .member=${m}
              .engine=${engine} .stats=${byId.get(m.id)} .level=${(slot: number) => levels().peer(slot)}
              .gain=${mix?.gain ?? 1} .muted=${mix?.muted ?? false}></tutti-peer-strip>`;
          })}
        </div>
        ${locked
          ? nothing
          : html`
            ${this.renderRoster(s)}
            <tutti-metronome .session=${s}></tutti-metronome>
            <div class="card"><tutti-notes .text=${s.room.notes}></tutti-notes></div>
            <div class="card"><tutti-setlist .room=${s.room}></tutti-setlist></div>
            ${this.renderSettings(s)}`}
      </section>
    `;
  }
}

/**
 * The jitter-buffer label: the depth in use. Automatic: what the worker chose for each peer now
 * (one figure, or the range when peers differ), then the manual value the slider would apply.
 */
/** Our speaker's dropouts (src/ui/output-dropouts.ts): a warning while there are some. */
function speakerNote(o: OutputNote | null) {
  if (!o) return nothing;
  return html`<span class=${o.warn ? 'clip' : 'muted-note'} data-testid="output-dropouts" title="Gaps your speaker played because this computer did not have the sound ready in time: every peer's sound has them at once, and no connection is to blame.">${o.text}</span>`;
}

function depthLabel(adaptive: boolean, manual: number, stats: StatsMessage | null): string {
  const ms = (q: number): string => `${(q * QUANTUM_MS).toFixed(1)} ms`;
  if (!adaptive) return `Jitter buffer: ${manual} × ${QUANTUM_MS.toFixed(2)} ms = ${ms(manual)}`;
  const depths = (stats?.peers ?? []).map((p) => p.depth);
  if (depths.length === 0) return `Jitter buffer: automatic (manual when off: ${manual} = ${ms(manual)})`;
  const lo = Math.min(...depths);
  const hi = Math.max(...depths);
  const now = lo === hi ? `${lo} × ${QUANTUM_MS.toFixed(2)} ms = ${ms(lo)}` : `${lo}–${hi} quanta = ${ms(lo)}–${ms(hi)} (per peer)`;
  return `Jitter buffer: automatic, now ${now} (manual when off: ${manual})`;
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-room': TuttiRoom;
  }
  interface HTMLElementEventMap {
    'leave-room': CustomEvent<void>;
    'retry-password': CustomEvent<void>;
  }
}
