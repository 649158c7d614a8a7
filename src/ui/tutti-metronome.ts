// <tutti-metronome>: the room's shared metronome (issue 12, item 2). Tempo (typed or tapped),
// meter, accent, count-in, together or leader mode, start and stop are room state (every member
// sees and may change them); the click's volume is this device's. The beat light shows each beat
// when its click reaches this device's speaker (the output clock's reading of the context time
// being played), for those who mute the click. Shows a Session's state and calls its methods.

import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { DEFAULT_METRONOME, MAX_BEATS_PER_BAR, MAX_BPM, MAX_COUNT_IN_BARS, MIN_BPM, beatPosition, checkBpm, tapTempo, type MetronomeState } from '../shared/metronome.ts';
import type { Session } from '../room/session.ts';
import { SessionWatch } from './session-watch.ts';
import { viewStyles } from './tutti-app-styles.ts';

/** A beat flashes this long after its click reaches the speaker (ms). */
const LIT_MS = 120;

@customElement('tutti-metronome')
export class TuttiMetronome extends LitElement {
  static override styles = [
    viewStyles,
    css`
      .beats { display: flex; gap: 0.4rem; align-items: center; min-height: 1.6rem; flex-wrap: wrap; }
      .dot { width: 1.1rem; height: 1.1rem; border-radius: 50%; border: 2px solid currentColor; opacity: 0.5; }
      .dot.on { background: currentColor; opacity: 0.8; }
      .dot.on.flash { opacity: 1; transform: scale(1.25); }
      .dot.accent { width: 1.4rem; height: 1.4rem; }
      .count-in { color: #b45309; }
      .error { color: #b91c1c; }
      select, input { max-width: 100%; }
    `,
  ];

  @property({ attribute: false }) session: Session | undefined;
  /** The beat shown now (−1: none), and whether it is flashing (its click just reached the speaker). */
  @state() private lit = -1;
  @state() private flash = false;
  @state() private error = '';
  private taps: number[] = [];
  private frame = 0;

  constructor() {
    super();
    new SessionWatch(this);
  }

  // The beat light runs on animation frames only while the metronome runs: a frame requested at
  // every display refresh costs the page a whole frame's work even when nothing moves
  // (src/ui/display-poll.ts). A session change (start, stop) re-renders and so re-arms it.
  override updated(): void {
    if (this.frame === 0 && this.running()) {
      const tick = (): void => {
        this.updateLight();
        this.frame = this.running() ? requestAnimationFrame(tick) : 0;
      };
      this.frame = requestAnimationFrame(tick);
    }
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    cancelAnimationFrame(this.frame);
    this.frame = 0;
  }

  private running(): boolean {
    return this.isConnected && this.session?.engine !== undefined && this.session.metronome?.startMs != null;
  }

  /**
   * The beat shown: the last one rendered, from when the output clock says its click is playing
   * (until then the one before it stays); it flashes for LIT_MS.
   */
  private updateLight(): void {
    const engine = this.session?.engine;
    const b = engine?.beatRendered();
    if (!engine || this.session?.metronome?.startMs == null) {
      if (this.lit !== -1) this.lit = -1;
      return;
    }
    if (!b) return;
    const playing = engine.context.getOutputTimestamp().contextTime ?? engine.context.currentTime;
    const since = (playing - b.atS) * 1000;
    if (since >= 0 && b.beat !== this.lit) this.lit = b.beat;
    const flash = since >= 0 && since < LIT_MS;
    if (flash !== this.flash) this.flash = flash;
  }

  private act(fn: () => void): void {
    try {
      fn();
      this.error = '';
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    }
  }

  private onBpm(s: Session, text: string): void {
    const r = checkBpm(text);
    if ('error' in r) this.error = r.error;
    else this.act(() => s.setMetronome({ bpm: r.bpm }));
  }

  private onTap(s: Session): void {
    const now = performance.now();
    this.taps = [...this.taps.slice(-12), now];
    const bpm = tapTempo(this.taps);
    if (bpm !== null) this.act(() => s.setMetronome({ bpm }));
  }

  private status(s: Session, m: MetronomeState): string {
    const st = s.stats?.metronome;
    if (m.startMs === null) return 'Stopped';
    if (st === 'no-clock') return 'Waiting for the shared clock';
    if (st === 'no-speaker') return 'Waiting for the output device';
    const meter = `${m.bpm} bpm, ${m.beatsPerBar} a bar`;
    if (m.mode === 'together') return `Running: ${meter}, everyone on the same beat`;
    const leader = m.leader === null ? 'the leader' : m.leader === s.room.clientId ? 'you' : (s.roster.get(m.leader)?.name ?? 'the leader');
    switch (s.advance.why) {
      case 'leader':
        return leader === 'you' ? `Running: ${meter}, you lead: everyone's playing reaches you on your beat` : `Running: ${meter}, ${leader} leads: your clicks come ${s.advance.ms.toFixed(1)} ms early, so your playing reaches ${leader} on the beat`;
      case 'measuring':
        return `Running: ${meter}, ${leader} leads: measuring your delay to ${leader}`;
      case 'leader-gone':
        return `Running: ${meter}: the leader left, so everyone is on the same beat`;
      default:
        return `Running: ${meter}`;
    }
  }

  private renderLight(m: MetronomeState) {
    const pos = this.lit >= 0 ? beatPosition(m, this.lit) : null;
    return html`<div class="beats" data-testid="beat-light" data-beat=${String(this.lit)} aria-hidden="true">
        ${Array.from({ length: m.beatsPerBar }, (_, i) => html`<span class="dot ${i === 0 && m.accent ? 'accent' : ''} ${pos && pos.beat === i + 1 ? 'on' : ''} ${this.flash ? 'flash' : ''}"></span>`)}
        <span class=${pos?.countIn ? 'count-in' : ''}>${pos ? (pos.countIn ? `Count-in ${pos.beat}` : `Bar ${pos.bar}, beat ${pos.beat}`) : ''}</span>
      </div>`;
  }

  override render() {
    const s = this.session;
    if (!s?.engine) return nothing;
    const m = s.metronome ?? DEFAULT_METRONOME;
    const running = m.startMs !== null;
    return html`<section class="card" aria-labelledby="metronome-h">
      <h2 id="metronome-h">Metronome</h2>
      <p data-testid="metronome-status" data-running=${String(running)}>${this.status(s, m)}</p>
      ${running ? this.renderLight(m) : nothing}
      <div class="controls">
        <button name="metronome-start" @click=${() => this.act(() => (running ? s.stopMetronome() : s.startMetronome()))}>${running ? 'Stop' : 'Start'}</button>
        <label>Tempo (bpm)
          <input type="number" name="bpm" min=${MIN_BPM} max=${MAX_BPM} step="1" .value=${String(m.bpm)} @change=${(e: Event) => this.onBpm(s, (e.target as HTMLInputElement).value)} />
        </label>
        <button name="tap" @click=${() => this.onTap(s)} title="Tap the beat a few times">Tap tempo</button>
        <label>Beats a bar
          <select name="beats" @change=${(e: Event) => this.act(() => s.setMetronome({ beatsPerBar: Number((e.target as HTMLSelectElement).value) }))}>
            ${Array.from({ length: MAX_BEATS_PER_BAR }, (_, i) => html`<option value=${i + 1} ?selected=${m.beatsPerBar === i + 1}>${i + 1}</option>`)}
          </select>
        </label>
        <label class="check"><input type="checkbox" name="accent" .checked=${m.accent} @change=${(e: Event) => this.act(() => s.setMetronome({ accent: (e.target as HTMLInputElement).checked }))} /> Accent the first beat</label>
        <label>Count-in
          <select name="count-in" @change=${(e: Event) => this.act(() => s.setMetronome({ countInBars: Number((e.target as HTMLSelectElement).value) }))}>
            ${Array.from({ length: MAX_COUNT_IN_BARS + 1 }, (_, i) => html`<option value=${i} ?selected=${m.countInBars === i}>${i === 0 ? 'None' : `${i} bar${i > 1 ? 's' : ''}`}</option>`)}
          </select>
        </label>
        <label>Timing
          <select name="metronome-mode" @change=${(e: Event) => this.act(() => s.setMetronome({ mode: (e.target as HTMLSelectElement).value === 'leader' ? 'leader' : 'together' }))}>
            <option value="together" ?selected=${m.mode === 'together'} title="Everyone hears the beat at the same moment">Together</option>
            <option value="leader" ?selected=${m.mode === 'leader'} title="Each member's click comes early by their delay to the leader: the leader hears everyone on the beat">Leader</option>
          </select>
        </label>
        ${m.mode === 'leader' && m.leader !== s.room.clientId ? html`<button name="lead" @click=${() => this.act(() => s.setMetronome({ mode: 'leader' }))}>Lead</button>` : nothing}
        <label>Click volume (this device)
          <input type="range" name="click" min="0" max="1" step="0.01" .value=${String(s.choices.click)} @input=${(e: Event) => s.setClick(Number((e.target as HTMLInputElement).value))} />
        </label>
      </div>
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
    </section>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'tutti-metronome': TuttiMetronome;
  }
}
