// <tutti-app>: joins a room and shows the mixer. Owns the audio engine, the signaling client and
// the audio mesh for the session; everything it shows comes from control messages and meters.

import { LitElement, html, nothing } from 'lit';
import { customElement, state } from 'lit/decorators.js';
import { DEFAULT_DEPTH, DEFAULT_REDUNDANCY, MAX_DEPTH, MIN_DEPTH, QUANTUM_MS } from '../shared/constants.ts';
import { payloadKbps as sendKbps } from '../shared/wire.ts';
import type { PeerStats, StatsMessage } from '../shared/worker-protocol.ts';
import { AudioEngine } from '../engine/audio-engine.ts';
import { TuttiError } from '../engine/errors.ts';
import { testOptionsFromUrl } from '../engine/test-options.ts';
import { AudioMesh, type RemoteMember } from '../room/audio-mesh.ts';
import { SignalingClient, type ConnectionState } from '../room/signaling-client.ts';
import { appStyles } from './tutti-app-styles.ts';
import type { PeerMixDetail } from './tutti-peer-strip.ts';
import './tutti-meter.ts';
import './tutti-peer-strip.ts';
import './tutti-measure-tools.ts';
import './tutti-setup-check.ts';

interface Session {
  engine: AudioEngine;
  signaling: SignalingClient;
  mesh: AudioMesh;
}

const params = new URLSearchParams(location.search);

@customElement('tutti-app')
export class TuttiApp extends LitElement {
  static override styles = appStyles;

  @state() private phase: 'join' | 'joining' | 'room' = 'join';
  @state() private error = '';
  @state() private room = params.get('room') ?? '';
  @state() private name = localStorage.getItem('tutti.name') ?? '';
  @state() private channels: 1 | 2 = 2;
  @state() private depth = DEFAULT_DEPTH;
  @state() private adaptive = true;
  @state() private redundancy = DEFAULT_REDUNDANCY;
  @state() private selfMuted = false;
  @state() private masterGain = 1;
  @state() private members: RemoteMember[] = [];
  @state() private signalingState: ConnectionState = 'connecting';
  /** Latest stats from the network worker (2 Hz); exposed for tests and the UI. */
  @state() stats: StatsMessage | null = null;
  private readonly mix = new Map<string, { gain: number; muted: boolean }>();
  private session: Session | null = null;

  override connectedCallback(): void {
    super.connectedCallback();
    addEventListener('keydown', this.onKey);
    addEventListener('pagehide', this.onPageHide);
  }
  override disconnectedCallback(): void {
    super.disconnectedCallback();
    removeEventListener('keydown', this.onKey);
    removeEventListener('pagehide', this.onPageHide);
  }

  private readonly onKey = (e: KeyboardEvent): void => {
    // Space toggles mute in the room, unless the user is typing or operating a control.
    const t = e.composedPath()[0] as HTMLElement | undefined;
    if (e.code !== 'Space' || this.phase !== 'room' || (t && /^(INPUT|BUTTON|SELECT|TEXTAREA)$/.test(t.tagName))) return;
    e.preventDefault();
    this.toggleMute();
  };

  private readonly onPageHide = (): void => this.session?.mesh.leave();

  private async join(e: Event): Promise<void> {
    e.preventDefault();
    const room = this.room.trim();
    const name = this.name.trim();
    if (!room || !name) {
      this.error = 'Enter your name and a room name.';
      return;
    }
    this.error = '';
    this.phase = 'joining';
    localStorage.setItem('tutti.name', name);
    try {
      const test = testOptionsFromUrl(params);
      const engine = await AudioEngine.start({
        channels: this.channels,
        depth: this.depth,
        adaptive: this.adaptive,
        redundancy: this.redundancy,
        ...(test ? { test } : {}),
      });
      const signaling = new SignalingClient(params.get('signal') ?? SignalingClient.defaultUrl());
      signaling.onstatechange = (s) => (this.signalingState = s);
      const mesh = new AudioMesh(signaling, engine.net, room, name, iceServersFromSettings());
      mesh.onchange = () => (this.members = mesh.members());
      engine.net.on('stats', (s) => (this.stats = s));
      engine.net.on('error', (m) => (this.error = m));
      this.session = { engine, signaling, mesh };
      const keep = new URLSearchParams([...params].filter(([k]) => k !== 'room'));
      history.replaceState(null, '', `?room=${encodeURIComponent(room)}${keep.size ? `&${keep}` : ''}`);
      this.phase = 'room';
    } catch (err) {
      this.error = err instanceof TuttiError ? err.message : `Could not start audio: ${err instanceof Error ? err.message : String(err)}`;
      this.phase = 'join';
    }
  }

  private async leave(): Promise<void> {
    const s = this.session;
    this.session = null;
    this.phase = 'join';
    this.members = [];
    this.stats = null;
    if (!s) return;
    s.mesh.leave();
    s.signaling.close();
    await s.engine.stop();
  }

  private toggleMute(): void {
    this.selfMuted = !this.selfMuted;
    this.session?.engine.net.setSend(this.channels, this.selfMuted);
  }

  private setChannels(channels: 1 | 2): void {
    this.channels = channels;
    this.session?.engine.net.setSend(channels, this.selfMuted);
  }

  private setDepth(depth: number, adaptive: boolean): void {
    this.depth = depth;
    this.adaptive = adaptive;
    this.session?.engine.net.setDepth(depth, adaptive);
  }

  private setRedundancy(frames: number): void {
    this.redundancy = frames;
    this.session?.engine.net.setRedundancy(frames);
  }

  private onPeerMix(e: CustomEvent<PeerMixDetail>): void {
    const { peerId, gain, muted } = e.detail;
    this.mix.set(peerId, { gain, muted });
    this.session?.engine.net.setPeerMix(peerId, gain, muted);
  }

  override render() {
    return html`
      <h1>Tutti</h1>
      ${this.error ? html`<p class="error" role="alert" data-testid="error">${this.error}</p>` : nothing}
      ${this.phase === 'room' ? this.renderRoom() : this.renderJoin()}
    `;
  }

  private renderJoin() {
    return html`
      <form @submit=${this.join} aria-label="Join a room">
        <label>Your name
          <input type="text" name="name" autocomplete="nickname" maxlength="40" required .value=${this.name}
            @input=${(e: Event) => (this.name = (e.target as HTMLInputElement).value)} />
        </label>
        <label>Room
          <input type="text" name="room" maxlength="80" required .value=${this.room}
            @input=${(e: Event) => (this.room = (e.target as HTMLInputElement).value)} />
        </label>
        <fieldset>
          <legend>Send</legend>
          <label><input type="radio" name="channels" value="1" .checked=${this.channels === 1} @change=${() => (this.channels = 1)} /> Mono</label>
          <label><input type="radio" name="channels" value="2" .checked=${this.channels === 2} @change=${() => (this.channels = 2)} /> Stereo</label>
        </fieldset>
        <button class="primary" type="submit" ?disabled=${this.phase === 'joining'}>${this.phase === 'joining' ? 'Joining…' : 'Join'}</button>
      </form>
      <tutti-setup-check .channels=${this.channels} .signalUrl=${params.get('signal') ?? SignalingClient.defaultUrl()}></tutti-setup-check>
    `;
  }

  private renderRoom() {
    const s = this.session!;
    const levels = () => s.engine.levels();
    const byId = new Map<string, PeerStats>((this.stats?.peers ?? []).map((p) => [p.peerId, p]));
    return html`
      <section aria-label="Room ${this.room}">
        <div class="bar">
          <strong class="grow">Room: ${this.room}</strong>
          <span data-testid="signaling">${this.signalingState === 'open' ? 'online' : this.signalingState}</span>
          <button @click=${this.leave}>Leave</button>
        </div>
        <div class="self">
          <div class="bar">
            <strong class="grow">You (${this.name})</strong>
            <button aria-pressed=${String(this.selfMuted)} @click=${this.toggleMute} title="Space toggles mute">${this.selfMuted ? 'Unmute' : 'Mute'}</button>
          </div>
          <tutti-meter .read=${() => levels().self} label="Your input level"></tutti-meter>
          <div class="controls">
            <label><input type="checkbox" name="adaptive" .checked=${this.adaptive}
                @change=${(e: Event) => this.setDepth(this.depth, (e.target as HTMLInputElement).checked)} /> Automatic jitter buffer</label>
            <label>Jitter buffer${this.adaptive ? ' (manual when automatic is off)' : ''}: ${this.depth} × ${QUANTUM_MS.toFixed(2)} ms = ${(this.depth * QUANTUM_MS).toFixed(1)} ms
              <input type="range" name="depth" min=${MIN_DEPTH} max=${MAX_DEPTH} step="1" .value=${String(this.depth)} ?disabled=${this.adaptive}
                @input=${(e: Event) => this.setDepth(Number((e.target as HTMLInputElement).value), false)} />
            </label>
            <label>Redundancy
              <select name="redundancy" @change=${(e: Event) => this.setRedundancy(Number((e.target as HTMLSelectElement).value))}>
                ${[0, 1, 2, 3].map((n) => html`<option value=${n} ?selected=${this.redundancy === n}>${n === 0 ? 'Off' : `${n} frame${n > 1 ? 's' : ''}`} · ${sendKbps(this.channels, n)} kbit/s per peer</option>`)}
              </select>
            </label>
            <label>Output volume
              <input type="range" name="master" min="0" max="2" step="0.01" .value=${String(this.masterGain)}
                @input=${(e: Event) => { this.masterGain = Number((e.target as HTMLInputElement).value); s.engine.net.setMasterGain(this.masterGain); }} />
            </label>
            <label>Send
              <select name="send-channels" @change=${(e: Event) => this.setChannels((e.target as HTMLSelectElement).value === '1' ? 1 : 2)}>
                <option value="1" ?selected=${this.channels === 1}>Mono</option>
                <option value="2" ?selected=${this.channels === 2}>Stereo</option>
              </select>
            </label>
          </div>
          <label>Mix output
            ${levels().clipped > 0 ? html`<span class="clip" title="The mix exceeded full scale and was clipped; turn the output or a peer down.">CLIP (${levels().clipped} samples)</span>` : nothing}
            <tutti-meter .read=${() => levels().master} label="Mix output level"></tutti-meter></label>
          ${this.stats
            ? html`<span class="muted-note" data-testid="send-stats">Sending ${this.stats.sendFramesPerSecond} frames/s · worker ${this.stats.workerCpuMsPerSecond} ms/s</span>`
            : nothing}
        </div>
        <tutti-measure-tools .engine=${s.engine}></tutti-measure-tools>
        <div class="peers" @peer-mix=${this.onPeerMix}>
          ${this.members.length === 0 ? html`<p class="muted-note">Nobody else is here yet. Share the room name: <strong>${this.room}</strong></p>` : nothing}
          ${this.members.map((m) => {
            const mix = this.mix.get(m.id);
            return html`<tutti-peer-strip data-peer=${m.id} .member=${m} 
              .engine=${s.engine} .stats=${byId.get(m.id)} .level=${(slot: number) => levels().peer(slot)}
              .gain=${mix?.gain ?? 1} .muted=${mix?.muted ?? false}></tutti-peer-strip>`;
          })}
        </div>
      </section>
    `;
  }
}

/** ICE servers from settings (localStorage `tutti.iceServers`, JSON); none by default: LAN and loopback need none. */
function iceServersFromSettings(): RTCIceServer[] {
  try {
    const v = JSON.parse(localStorage.getItem('tutti.iceServers') ?? '[]') as unknown;
    return Array.isArray(v) ? (v as RTCIceServer[]) : [];
  } catch {
    return [];
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-app': TuttiApp;
  }
}
