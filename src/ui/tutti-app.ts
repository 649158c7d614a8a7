// <tutti-app>: creates or joins a lesson room and shows it: roster, audio mixer, notes, setlist,
// sharing and room settings. Owns the session: the Room (Yjs doc + y-webrtc), and for a
// participant the audio engine and the audio mesh; for a paired phone, the remote view only.

import { LitElement, html, nothing } from 'lit';
import { customElement, state } from 'lit/decorators.js';
import { DEFAULT_DEPTH, DEFAULT_REDUNDANCY, MAX_DEPTH, MAX_REDUNDANCY, MIN_DEPTH, QUANTUM_MS } from '../shared/constants.ts';
import { payloadKbps as sendKbps } from '../shared/wire.ts';
import type { PeerStats, StatsMessage } from '../shared/worker-protocol.ts';
import { MAX_ROOM_TITLE, ROLES, parseControlRequest, type MemberState, type MixState, type OpenRoom, type Role } from '../shared/signaling-protocol.ts';
import { AudioEngine } from '../engine/audio-engine.ts';
import { TuttiError } from '../engine/errors.ts';
import { testOptionsFromUrl } from '../engine/test-options.ts';
import { AudioMesh, type RemoteMember } from '../room/audio-mesh.ts';
import { effectiveIceServers } from '../room/ice-servers.ts';
import { Room, type Access } from '../room/room.ts';
import { LISTING_KEY, fetchOpenRooms } from '../room/open-rooms.ts';
import { forgetRoom, newRoomName, parseRoomLink, recentRooms, rememberRoom, type RecentRoom } from '../room/directory.ts';
import { appStyles } from './tutti-app-styles.ts';
import type { PeerMixDetail } from './tutti-peer-strip.ts';
import './tutti-meter.ts';
import './tutti-peer-strip.ts';
import './tutti-settings.ts';
import './tutti-notes.ts';
import './tutti-setlist.ts';
import './tutti-share.ts';
import './tutti-remote.ts';
import './tutti-measure-tools.ts';
import './tutti-setup-check.ts';

interface Session {
  room: Room;
  /** Absent in remote mode: a paired phone sends no audio and opens no microphone. */
  engine?: AudioEngine;
  mesh?: AudioMesh;
}

/** How often the join view refreshes the open-rooms list. (Above the class: the element can be
 * upgraded, and connectedCallback run, as soon as the class is defined.) */
const OPEN_ROOMS_REFRESH_MS = 10_000;

const params = new URLSearchParams(location.search);
const link = parseRoomLink(location.hash);

/**
 * The installed app's shortcuts (manifest `shortcuts`, vite.config.ts) open `/?action=new-room` and
 * `/?action=join`. Neither acts on its own: starting audio needs a gesture in the page, so the
 * shortcut takes the user to the one control that finishes the job.
 */
export type ShortcutAction = 'new-room' | 'join';
function shortcutAction(value: string | null): ShortcutAction | undefined {
  return value === 'new-room' || value === 'join' ? value : undefined;
}

@customElement('tutti-app')
export class TuttiApp extends LitElement {
  static override styles = appStyles;

  @state() private phase: 'join' | 'joining' | 'room' = 'join';
  @state() private error = '';
  /** From the share link (`#room=`), or an older `?room=` link (the installed app's shortcuts and bookmarks). */
  @state() private room = link?.room ?? params.get('room') ?? '';
  @state() private password = link?.password ?? '';
  @state() private name = localStorage.getItem('tutti.name') ?? '';
  @state() private myRole: Role = (localStorage.getItem('tutti.role') as Role | null) ?? 'student';
  @state() private instrument = localStorage.getItem('tutti.instrument') ?? '';
  /** Remote mode: the client id of the participant this device controls (from a pairing link). */
  @state() private remoteOf: number | undefined = link?.remote;
  @state() private channels: 1 | 2 = 2;
  @state() private depth = DEFAULT_DEPTH;
  @state() private adaptive = true;
  @state() private redundancy = DEFAULT_REDUNDANCY;
  @state() private selfMuted = false;
  @state() private masterGain = 1;
  @state() private inputGain = 1;
  @state() private members: RemoteMember[] = [];
  @state() private roster = new Map<number, MemberState>();
  @state() private access: Access = 'connecting';
  @state() private roomDepth: number | undefined;
  @state() private recent: RecentRoom[] = recentRooms();
  @state() private pairing = false;
  /** The server's open-rooms list (join view), and whether the server keeps one. */
  @state() private openRooms: OpenRoom[] = [];
  @state() private openRoomsEnabled = false;
  /** The title this room is listed under on the server (room setting), or undefined. */
  @state() private listingTitle: string | undefined;
  private openRoomsTimer: ReturnType<typeof setInterval> | undefined;
  /** A hint shown on the join form for a shortcut's action (e.g. "enter your name first"). */
  @state() private hint = '';
  /** Latest stats from the network worker (2 Hz); exposed for tests and the UI. */
  @state() stats: StatsMessage | null = null;
  private readonly mix = new Map<string, { gain: number; muted: boolean }>();
  /** The current session; exposed read-only for tests (e.g. to take the room offline). */
  session: Session | null = null;

  override connectedCallback(): void {
    super.connectedCallback();
    addEventListener('keydown', this.onKey);
    addEventListener('pagehide', this.onPageHide);
    addEventListener('hashchange', this.onHash);
    void this.refreshOpenRooms();
    this.openRoomsTimer = setInterval(() => void this.refreshOpenRooms(), OPEN_ROOMS_REFRESH_MS);
  }
  override disconnectedCallback(): void {
    super.disconnectedCallback();
    removeEventListener('keydown', this.onKey);
    removeEventListener('pagehide', this.onPageHide);
    removeEventListener('hashchange', this.onHash);
    clearInterval(this.openRoomsTimer);
  }

  /** The join view's open-rooms list; not fetched while in a room. */
  private async refreshOpenRooms(): Promise<void> {
    if (this.phase !== 'join') return;
    const list = await fetchOpenRooms();
    this.openRoomsEnabled = list.enabled;
    this.openRooms = list.rooms;
    // A server that keeps no list (turned off, or a static host) will not start keeping one.
    if (list.answered && !list.enabled) clearInterval(this.openRoomsTimer);
  }

  override firstUpdated(): void {
    const action = shortcutAction(params.get('action'));
    if (!action || this.phase !== 'join' || this.remoteOf !== undefined) return;
    // Drop the action from the address so a reload or a shared copy does not repeat it.
    const rest = new URLSearchParams(params);
    rest.delete('action');
    history.replaceState(null, '', `${location.pathname}${rest.size ? `?${rest}` : ''}${location.hash}`);
    const field = (name: string) => this.renderRoot.querySelector<HTMLElement>(`input[name=${name}]`);
    if (!this.name.trim()) {
      this.hint = action === 'new-room' ? 'Enter your name, then press Create lesson room.' : 'Enter your name and the room, then press Join.';
      field('name')?.focus();
    } else if (action === 'new-room') {
      this.hint = 'Press Create lesson room (or Enter) to open a new room with an unguessable name.';
      this.renderRoot.querySelector<HTMLElement>('button[data-action=new-room]')?.focus();
    } else {
      this.hint = this.room ? '' : 'Paste the room name from your teacher\'s link, then press Join.';
      field(this.room ? 'password' : 'room')?.focus();
    }
  }

  /** A room picked from a list: fill it in and go to what is still missing (password, name, Join). */
  private pickRoom(room: string, locked: boolean): void {
    this.room = room;
    this.password = '';
    const q = (sel: string) => this.renderRoot.querySelector<HTMLElement>(sel);
    (locked ? q('input[name=password]') : !this.name.trim() ? q('input[name=name]') : q('button[type=submit]'))?.focus();
  }

  /** A room link opened while the app is already loaded (only the fragment changed). */
  private readonly onHash = (): void => {
    const l = parseRoomLink(location.hash);
    if (!l || this.phase !== 'join') return;
    this.room = l.room;
    this.password = l.password ?? '';
    this.remoteOf = l.remote;
  };

  private readonly onKey = (e: KeyboardEvent): void => {
    // Space toggles mute in the room, unless the user is typing or operating a control.
    const t = e.composedPath()[0] as HTMLElement | undefined;
    if (e.code !== 'Space' || this.phase !== 'room' || !this.session?.engine || (t && /^(INPUT|BUTTON|SELECT|TEXTAREA)$/.test(t.tagName))) return;
    e.preventDefault();
    this.toggleMute();
  };

  private readonly onPageHide = (): void => {
    this.session?.mesh?.leave();
    this.session?.room.destroy();
  };

  private createRoom(): void {
    this.room = newRoomName();
    this.myRole = 'teacher';
    this.remoteOf = undefined;
    void this.join();
  }

  private async join(e?: Event): Promise<void> {
    e?.preventDefault();
    const roomName = this.room.trim();
    const name = this.name.trim();
    if (!roomName || !name) {
      this.error = 'Enter your name and a room name.';
      return;
    }
    this.error = '';
    this.hint = '';
    this.phase = 'joining';
    localStorage.setItem('tutti.name', name);
    localStorage.setItem('tutti.role', this.myRole);
    localStorage.setItem('tutti.instrument', this.instrument);
    const remote = this.remoteOf !== undefined;
    let engine: AudioEngine | undefined;
    try {
      // Test switches in the address act only in the test build; in what users run this is a
      // constant null and the parser is not in the bundle (a shared link cannot change audio).
      const test = __TUTTI_TEST__ ? testOptionsFromUrl(params) : null;
      if (!remote) {
        engine = await AudioEngine.start({
          channels: this.channels,
          depth: this.depth,
          adaptive: this.adaptive,
          redundancy: this.redundancy,
          ...(test ? { test } : {}),
        });
      }
      const iceServers = await effectiveIceServers();
      const room = new Room({ name: roomName, password: this.password, signalingUrl: signalingUrl(), iceServers });
      const self: MemberState = {
        v: 1, name: name.slice(0, 40), role: this.myRole, instrument: this.instrument.trim().slice(0, 40), muted: this.selfMuted,
        format: this.channels === 1 ? 'mono' : 'stereo', kind: remote ? 'remote' : 'participant',
        ...(remote ? { controls: this.remoteOf! } : { audio: {}, mix: this.mixState() }),
      };
      room.setSelf(self);
      room.onaccess = (a) => (this.access = a);
      room.onroster = () => (this.roster = room.roster());
      this.roster = room.roster();
      this.access = room.access;
      const applyRoomDepth = (): void => {
        const d = room.settings.get('depth');
        this.roomDepth = typeof d === 'number' ? d : undefined;
        if (this.roomDepth !== undefined && engine) this.setDepth(this.roomDepth, false);
      };
      // Redundancy is what every sender in the room carries: one room-wide choice (a teacher sets
      // it once for the lesson), applied by each member's own network worker.
      const applyRoomRedundancy = (): void => {
        const r = room.settings.get('redundancy');
        if (typeof r === 'number' && Number.isInteger(r) && r >= 0 && r <= MAX_REDUNDANCY && r !== this.redundancy) {
          this.redundancy = r;
          engine?.net.setRedundancy(r);
        }
      };
      // Listing on the server's open rooms is a room setting too: every member who can read the
      // room announces it, so it stays listed while any of them is there.
      const applyRoomListing = (): void => {
        const t = room.settings.get(LISTING_KEY);
        this.listingTitle = typeof t === 'string' ? t.slice(0, MAX_ROOM_TITLE) : undefined;
        room.setListing(this.listingTitle ?? null);
      };
      room.settings.observe(applyRoomDepth);
      room.settings.observe(applyRoomRedundancy);
      room.settings.observe(applyRoomListing);
      void room.loaded.then(() => {
        applyRoomDepth();
        applyRoomRedundancy();
        applyRoomListing();
      });
      const session: Session = { room };
      if (engine) {
        const mesh = new AudioMesh(room, engine.net, iceServers);
        mesh.onchange = () => (this.members = mesh.members());
        engine.net.on('stats', (s) => (this.stats = s));
        engine.net.on('error', (m) => (this.error = m));
        room.control.observe((ev) => {
          for (const key of ev.keysChanged) if (key.startsWith(`${room.clientId}:`)) this.applyControl(room.control.get(key));
        });
        Object.assign(session, { engine, mesh });
      }
      this.session = session;
      rememberRoom(roomName, !!this.password);
      this.recent = recentRooms();
      history.replaceState(null, '', `${location.pathname}${location.search}#room=${encodeURIComponent(roomName)}`);
      this.phase = 'room';
    } catch (err) {
      await engine?.stop();
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
    this.pairing = false;
    this.remoteOf = undefined;
    this.password = ''; // never carried over to the next room
    this.roster = new Map();
    this.listingTitle = undefined;
    if (!s) return;
    s.mesh?.leave();
    if (s.engine) {
      // Forget control requests addressed to us: our client id is never reused.
      for (const k of [...s.room.control.keys()]) if (k.startsWith(`${s.room.clientId}:`)) s.room.control.delete(k);
    }
    s.room.destroy();
    await s.engine?.stop();
    void this.refreshOpenRooms();
  }

  /** A paired remote asked to change our mixer (Y.Map `control`, key `<our id>:<what>`). */
  private applyControl(raw: unknown): void {
    const r = parseControlRequest(raw);
    if (!r) return;
    if (r.master !== undefined) this.setMaster(r.master);
    if (r.depth !== undefined) this.setDepth(Math.round(r.depth), false);
    if (r.peer) this.setPeerMix(r.peer.id, r.peer.gain, r.peer.muted);
  }

  private mixState(): MixState {
    return { master: this.masterGain, depth: this.depth, peers: Object.fromEntries(this.mix) };
  }
  private publishMix(): void {
    if (this.session?.engine) this.session.room.patchSelf({ mix: this.mixState() });
  }

  private toggleMute(): void {
    this.selfMuted = !this.selfMuted;
    this.session?.engine?.net.setSend(this.channels, this.selfMuted);
    this.session?.room.patchSelf({ muted: this.selfMuted });
  }

  private setChannels(channels: 1 | 2): void {
    this.channels = channels;
    this.session?.engine?.net.setSend(channels, this.selfMuted);
    this.session?.room.patchSelf({ format: channels === 1 ? 'mono' : 'stereo' });
  }

  /** A manual depth (quanta), or adaptive (the depth is then only the fallback for manual). */
  private setDepth(depth: number, adaptive: boolean): void {
    this.depth = Math.min(MAX_DEPTH, Math.max(MIN_DEPTH, depth));
    this.adaptive = adaptive;
    this.session?.engine?.net.setDepth(this.depth, adaptive);
    this.publishMix();
  }

  /** A room setting: applied here at once and, through the room document, by every member. */
  private setRedundancy(frames: number): void {
    this.redundancy = frames;
    this.session?.engine?.net.setRedundancy(frames);
    this.session?.room.settings.set('redundancy', frames);
  }

  private setMaster(gain: number): void {
    this.masterGain = Math.min(2, Math.max(0, gain));
    this.session?.engine?.net.setMasterGain(this.masterGain);
    this.publishMix();
  }

  private setPeerMix(peerId: string, gain: number, muted: boolean): void {
    this.mix.set(peerId, { gain, muted });
    this.session?.engine?.net.setPeerMix(peerId, gain, muted);
    this.publishMix();
    this.requestUpdate();
  }

  private onPeerMix(e: CustomEvent<PeerMixDetail>): void {
    const { peerId, gain, muted } = e.detail;
    this.setPeerMix(peerId, gain, muted);
  }

  override render() {
    return html`
      <h1>Tutti</h1>
      ${this.error ? html`<p class="error" role="alert" data-testid="error">${this.error}</p>` : nothing}
      ${this.phase === 'room' ? (this.session?.engine ? this.renderRoom() : this.renderRemote()) : this.renderJoin()}
    `;
  }

  private renderJoin() {
    const remote = this.remoteOf !== undefined;
    return html`
      <form @submit=${this.join} aria-label=${remote ? 'Pair this device as a remote' : 'Join a room'}>
        ${this.hint && !remote ? html`<p class="muted-note" data-testid="hint">${this.hint}</p>` : nothing}
        ${remote ? html`<p class="muted-note">This device will be a remote control for one participant of room <strong>${this.room}</strong>: no microphone, no audio.</p>` : nothing}
        <label>Your name
          <input type="text" name="name" autocomplete="nickname" maxlength="40" required .value=${this.name}
            @input=${(e: Event) => (this.name = (e.target as HTMLInputElement).value)} />
        </label>
        <label>Room
          <input type="text" name="room" maxlength="80" required autocomplete="off" .value=${this.room}
            @input=${(e: Event) => (this.room = (e.target as HTMLInputElement).value)} />
        </label>
        <label>Password (optional)
          <input type="password" name="password" autocomplete="off" maxlength="200" .value=${this.password}
            @input=${(e: Event) => (this.password = (e.target as HTMLInputElement).value)} />
        </label>
        ${remote
          ? nothing
          : html`<div class="controls">
              <label>Role
                <select name="role" @change=${(e: Event) => (this.myRole = (e.target as HTMLSelectElement).value as Role)}>
                  ${ROLES.map((r) => html`<option value=${r} ?selected=${this.myRole === r}>${r[0]!.toUpperCase() + r.slice(1)}</option>`)}
                </select>
              </label>
              <label>Instrument
                <input type="text" name="instrument" maxlength="40" .value=${this.instrument}
                  @input=${(e: Event) => (this.instrument = (e.target as HTMLInputElement).value)} />
              </label>
            </div>
            <fieldset>
              <legend>Send</legend>
              <label><input type="radio" name="channels" value="1" .checked=${this.channels === 1} @change=${() => (this.channels = 1)} /> Mono</label>
              <label><input type="radio" name="channels" value="2" .checked=${this.channels === 2} @change=${() => (this.channels = 2)} /> Stereo</label>
            </fieldset>`}
        <div class="bar">
          <button class="primary" type="submit" ?disabled=${this.phase === 'joining'}>${this.phase === 'joining' ? 'Joining…' : remote ? 'Connect remote' : 'Join'}</button>
          ${remote
            ? html`<button type="button" @click=${() => (this.remoteOf = undefined)}>Use this device normally</button>`
            : html`<button type="button" data-action="new-room" ?disabled=${this.phase === 'joining'} @click=${this.createRoom}
                title="A new room with an unguessable name; add a password above first if you want one">Create lesson room</button>`}
        </div>
      </form>
      <tutti-settings></tutti-settings>
      <tutti-setup-check .channels=${this.channels} .signalUrl=${signalingUrl()}></tutti-setup-check>
      ${this.openRooms.length && !remote
        ? html`<section aria-labelledby="open-h" class="recent">
            <h2 id="open-h">Open rooms on this server</h2>
            <ul data-testid="open-rooms">
              ${this.openRooms.map((r) => html`<li>
                <button class="link" @click=${() => this.pickRoom(r.room, r.locked)}
                  aria-label=${`Use open room ${r.title}${r.locked ? ' (password needed)' : ''}`}>${r.title}${r.locked ? ' 🔒' : ''}</button>
                <span class="muted-note">${r.connected} connected${r.title !== r.room ? html` · ${r.room}` : nothing}</span>
              </li>`)}
            </ul>
          </section>`
        : nothing}
      ${this.recent.length && !remote
        ? html`<section aria-labelledby="recent-h" class="recent">
            <h2 id="recent-h">Recent rooms on this device</h2>
            <ul data-testid="recent-rooms">
              ${this.recent.map((r) => html`<li>
                <button class="link" @click=${() => this.pickRoom(r.room, r.locked)}
                  aria-label=${`Use room ${r.room}`}>${r.room}${r.locked ? ' 🔒' : ''}</button>
                <span class="muted-note">${new Date(r.lastJoined).toLocaleString()}</span>
                <button aria-label=${`Forget room ${r.room}`} @click=${() => { forgetRoom(r.room); this.recent = recentRooms(); }}>✕</button>
              </li>`)}
            </ul>
          </section>`
        : nothing}
    `;
  }

  private renderAccess() {
    const others = [...this.roster.keys()].filter((id) => id !== this.session?.room.clientId).length;
    switch (this.access) {
      case 'wrong-password': {
        const n = Math.max(1, (this.session?.room.topicClients ?? 2) - 1);
        return html`<div class="error" role="alert" data-testid="access">
          <strong>Wrong password.</strong> ${n} ${n === 1 ? 'other is' : 'others are'} in this room, but nothing they send can be
          read with your password, nor what you send with theirs. You see no notes, no roster and hear no audio.
          <button @click=${async () => { const r = this.room; await this.leave(); this.room = r; this.password = ''; }}>Enter the password again</button>
        </div>`;
      }
      case 'intruder':
        return html`<p class="muted-note" role="status" data-testid="access">Someone tried to join this room with a different password; they can read nothing.</p>`;
      case 'connected':
        return html`<p class="muted-note" role="status" data-testid="access">Connected · ${others + 1} in the room</p>`;
      case 'alone':
        return html`<p class="muted-note" role="status" data-testid="access">You are the first here. Share the link below.</p>`;
      case 'waiting': {
        // Subscribed sockets that have sent nothing: no claim about the password (PROTOCOL.md §3.6).
        const n = Math.max(1, (this.session?.room.topicClients ?? 2) - 1);
        return html`<p class="muted-note" role="status" data-testid="access">Waiting for others to join. ${n} other ${n === 1 ? 'connection to this room has' : 'connections to this room have'} sent nothing yet.</p>`;
      }
      case 'connecting':
        return html`<p class="muted-note" role="status" data-testid="access">Looking for the room…</p>`;
      default:
        this.access satisfies never;
        return nothing;
    }
  }

  private renderRoster() {
    const selfId = this.session?.room.clientId;
    return html`<section aria-labelledby="roster-h" class="card">
      <h2 id="roster-h">In the room</h2>
      <ul class="roster" data-testid="roster">
        ${[...this.roster].map(([id, m]) => html`<li>
          <strong>${m.name}</strong>${id === selfId ? ' (you)' : ''} · ${m.kind === 'remote' ? 'remote control' : m.role}${m.instrument ? ` · ${m.instrument}` : ''}
          ${m.kind === 'participant' ? html` · ${m.format}${m.muted ? ' · muted' : ''}` : nothing}
        </li>`)}
      </ul>
    </section>`;
  }

  private renderRoom() {
    const s = this.session!;
    const engine = s.engine!;
    const levels = () => engine.levels();
    const byId = new Map<string, PeerStats>((this.stats?.peers ?? []).map((p) => [p.peerId, p]));
    const locked = this.access === 'wrong-password';
    return html`
      <section aria-label="Room ${this.room}">
        <div class="bar">
          <strong class="grow room-name">Room: ${this.room}${this.password ? ' 🔒' : ''}</strong>
          <button @click=${this.leave}>Leave</button>
        </div>
        ${this.renderAccess()}
        <div class="self">
          <div class="bar">
            <strong class="grow">You (${this.name})</strong>
            <button class="mute" aria-pressed=${String(this.selfMuted)} @click=${this.toggleMute} title="Space toggles mute">${this.selfMuted ? 'Unmute' : 'Mute'}</button>
          </div>
          <tutti-meter .read=${() => levels().self} label="Your input level"></tutti-meter>
          <div class="controls">
            <label>Input gain: ${Math.round(this.inputGain * 100)} %
              <input type="range" name="input-gain" min="0" max="2" step="0.01" .value=${String(this.inputGain)}
                @input=${(e: Event) => { this.inputGain = Number((e.target as HTMLInputElement).value); engine.setInputGain(this.inputGain); }} />
            </label>
            <label class="check"><input type="checkbox" name="adaptive" .checked=${this.adaptive}
                @change=${(e: Event) => this.setDepth(this.depth, (e.target as HTMLInputElement).checked)} /> Automatic jitter buffer</label>
            <label><span data-testid="depth-label">${depthLabel(this.adaptive, this.depth, this.stats)}</span>
              <input type="range" name="depth" min=${MIN_DEPTH} max=${MAX_DEPTH} step="1" .value=${String(this.depth)} ?disabled=${this.adaptive}
                @input=${(e: Event) => this.setDepth(Number((e.target as HTMLInputElement).value), false)} />
            </label>
            <label>Redundancy (room setting: everyone sends it)
              <select name="redundancy" @change=${(e: Event) => this.setRedundancy(Number((e.target as HTMLSelectElement).value))}>
                ${[0, 1, 2, 3].map((n) => html`<option value=${n} .selected=${this.redundancy === n}>${n === 0 ? 'Off' : `${n} frame${n > 1 ? 's' : ''}`} · ${sendKbps(this.channels, n)} kbit/s per peer</option>`)}
              </select>
            </label>
            <label>Output volume
              <input type="range" name="master" min="0" max="2" step="0.01" .value=${String(this.masterGain)}
                @input=${(e: Event) => this.setMaster(Number((e.target as HTMLInputElement).value))} />
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
            ? html`<span class="muted-note wide-only" data-testid="send-stats">Sending ${this.stats.sendFramesPerSecond} frames/s · worker ${this.stats.workerCpuMsPerSecond} ms/s</span>`
            : nothing}
        </div>
        <tutti-measure-tools .engine=${s.engine}></tutti-measure-tools>
        <div class="peers" @peer-mix=${this.onPeerMix}>
          ${this.members.map((m) => {
            const mix = this.mix.get(m.id);
            return html`<tutti-peer-strip data-peer=${m.id} .member=${m} 
              .engine=${s.engine} .stats=${byId.get(m.id)} .level=${(slot: number) => levels().peer(slot)}
              .gain=${mix?.gain ?? 1} .muted=${mix?.muted ?? false}></tutti-peer-strip>`;
          })}
        </div>
        ${locked
          ? nothing
          : html`
            ${this.renderRoster()}
            <div class="card"><tutti-notes .text=${s.room.notes}></tutti-notes></div>
            <div class="card"><tutti-setlist .room=${s.room}></tutti-setlist></div>
            <details class="card">
              <summary>Share and settings</summary>
              <tutti-share .room=${this.room} .password=${this.password}></tutti-share>
              <label>Room default jitter depth (applies to everyone)
                <input type="number" name="room-depth" min=${MIN_DEPTH} max=${MAX_DEPTH} .value=${String(this.roomDepth ?? this.depth)}
                  @change=${(e: Event) => s.room.settings.set('depth', Math.min(MAX_DEPTH, Math.max(MIN_DEPTH, Math.round(Number((e.target as HTMLInputElement).value)) || DEFAULT_DEPTH)))} />
              </label>
              ${this.openRoomsEnabled || this.listingTitle !== undefined
                ? html`<label class="check"><input type="checkbox" name="listed" .checked=${this.listingTitle !== undefined}
                      @change=${(e: Event) => ((e.target as HTMLInputElement).checked ? s.room.settings.set(LISTING_KEY, `${this.name.trim()}'s room`.slice(0, MAX_ROOM_TITLE)) : s.room.settings.delete(LISTING_KEY))} />
                      List this room on this server's open rooms (anyone who opens Tutti here sees it${this.password ? '; the password is still needed' : ''})</label>
                    ${this.listingTitle !== undefined
                      ? html`<label>Listed as
                          <input type="text" name="listing-title" maxlength=${MAX_ROOM_TITLE} .value=${this.listingTitle}
                            @change=${(e: Event) => s.room.settings.set(LISTING_KEY, (e.target as HTMLInputElement).value.trim().slice(0, MAX_ROOM_TITLE) || this.room)} />
                        </label>`
                      : nothing}`
                : nothing}
              <button aria-expanded=${String(this.pairing)} @click=${() => (this.pairing = !this.pairing)}>Pair a phone as remote control</button>
              ${this.pairing
                ? html`<p class="muted-note">Scan with the phone: it joins this room as a remote for you (no audio). The code holds the room password after #.</p>
                    <tutti-share .room=${this.room} .password=${this.password} .remote=${s.room.clientId} label="Remote pairing link"></tutti-share>`
                : nothing}
            </details>`}
      </section>
    `;
  }

  private renderRemote() {
    const s = this.session!;
    return html`<section aria-label="Remote control, room ${this.room}">
      <div class="bar">
        <strong class="grow room-name">Remote · ${this.room}</strong>
        <button @click=${this.leave}>Leave</button>
      </div>
      ${this.renderAccess()}
      <tutti-remote .room=${s.room} .target=${this.remoteOf!} .roster=${this.roster}></tutti-remote>
    </section>`;
  }
}

/** Our own signaling server on the page's host: the only one y-webrtc may use. */
function signalingUrl(): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/signal`;
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-app': TuttiApp;
  }
}

/**
 * The jitter-buffer label: the depth in use. Automatic: what the worker chose for each peer now
 * (one figure, or the range when peers differ), then the manual value the slider would apply.
 */
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
