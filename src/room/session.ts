// The page's session in one room: the Room (Yjs doc + y-webrtc), and for a participant the audio
// engine and the audio mesh; for a paired phone (remote mode) the room alone. Starts them in order,
// applies the room's shared settings (default depth, redundancy, listing) and a paired remote's
// requests, carries the player's audio choices to the engine and the room, and takes everything
// down on leave. No DOM: the views (src/ui) read its state and listen for `change`.

import { MAX_DEPTH, MAX_REDUNDANCY, MIN_DEPTH, DEFAULT_DEPTH, DEFAULT_REDUNDANCY } from '../shared/constants.ts';
import type * as Y from 'yjs';
import type { StatsMessage } from '../shared/worker-protocol.ts';
import { WIRE_VERSION, type QuantaPerPacket, type SendBits } from '../shared/wire.ts';
import { MAX_ROOM_TITLE, parseControlRequest, type MemberState, type MixState, type QualitySummary, type RecordingState, type Role, type ClockState } from '../shared/signaling-protocol.ts';
import { AudioEngine, type EngineOptions } from '../engine/audio-engine.ts';
import type { RecorderBridge } from '../engine/recorder-bridge.ts';
import { TrackRegistry, memberId } from './track-registry.ts';
import { CLIP_HOLD_SECONDS, advanceMoved, lightKey, qualitySummary } from './quality-summary.ts';
import { QUALITY_WINDOW } from '../ui/quality.ts';
import { AudioMesh, type RemoteMember } from './audio-mesh.ts';
import { DeviceChoice } from './device-choice.ts';
import { effectiveIceServers } from './ice-servers.ts';
import { LISTING_KEY } from './open-rooms.ts';
import { Room, writerOf, type Access } from './room.ts';
import { SessionLog } from './session-log.ts';
import { decideClock, type TakenBase } from './shared-clock.ts';
import { DEFAULT_METRONOME, METRONOME_KEY, parseMetronome, type MetronomeState } from '../shared/metronome.ts';
import { advanceFor, started, stopped, withTempo, type Advance } from './metronome-control.ts';
import { Lesson } from './lesson.ts';
import { inLesson, isLessonRoom, newLessonKey, type LessonCommand, type LessonKey, type LessonState, type Rejected } from './lesson-authority.ts';
import { lessonKeyFor } from './lesson-keys.ts';

/** The quality summary is republished this often when no light would change (ms). */
const QUALITY_REFRESH_MS = 5000;
/** A newcomer follows the room's shared clock; it starts one of its own only after this long with none in sight. */
const CLOCK_START_WAIT_MS = 3000;

/** An input peak at or above this is a clip (the meter reads the input after its gain, before the 16/24-bit rounding). */
const FULL_SCALE = 0.999;

/** Where this device keeps the resolution it sends (a sender's choice: the interface stays the same). */
const BITS_KEY = 'tutti.bits';
/** Where this device keeps its quanta per packet (2 on a computer too busy for a packet every 2.67 ms). */
const PER_PACKET_KEY = 'tutti.perPacket';

/**
 * The player's audio choices: made on the join form, changed in the room, kept for the next room
 * this page joins. A session changes them as the player (or their paired remote) does.
 */
export class AudioChoices {
  channels: 1 | 2 = 2;
  /** Sample resolution sent: 16 (the default) or 24 bits; this device remembers the last choice. */
  bits: SendBits = localStorage.getItem(BITS_KEY) === '24' ? 24 : 16;
  /** Quanta per packet sent: 1 (the default, lowest latency) or 2 (half the packets); this device remembers the last choice. */
  perPacket: QuantaPerPacket = localStorage.getItem(PER_PACKET_KEY) === '2' ? 2 : 1;
  depth = DEFAULT_DEPTH;
  /** Automatic depth (`depth` is then the fallback for manual). */
  adaptive = true;
  redundancy = DEFAULT_REDUNDANCY;
  muted = false;
  master = 1;
  inputGain = 1;
  /** The metronome's click volume on this device (0..1; 0: muted, the beat light still runs). */
  click = 0.5;
  /** Per remote peer (by mesh id): gain and mute. */
  readonly mix = new Map<string, { gain: number; muted: boolean }>();
}

/** Who joins which room, as the join form gives it. */
export interface SessionIdentity {
  room: string;
  password: string;
  name: string;
  role: Role;
  instrument: string;
  /** Remote mode: the client id of the participant this device controls (from a pairing link). */
  remoteOf?: number;
}

export class Session extends EventTarget {
  /** Remote peers with an audio link (participant only). */
  members: RemoteMember[] = [];
  roster = new Map<number, MemberState>();
  access: Access;
  /** The network worker's latest stats (1 Hz). */
  stats: StatsMessage | null = null;
  /** What happened in the room while this page was in it (exportable). */
  readonly log: SessionLog;
  /** The room's default jitter depth, when a member set one. */
  roomDepth: number | undefined;
  /** The title the room is listed under on the server's open rooms, or undefined. */
  listingTitle: string | undefined;
  /** The room's metronome (null: no one has set one), and our advance in it (leader mode). */
  metronome: MetronomeState | null = null;
  advance: Advance = { ms: 0, why: 'together' };
  private metronomeSent = '';
  /** The input and output devices (participant only). */
  readonly devices: DeviceChoice | undefined;
  /** The page's recorder, once attached (participant only): a paired remote may start and stop takes. */
  private recorder: RecorderBridge | undefined;
  private offRecorder: (() => void) | undefined;
  /** Our input's peak over the current second, and when it last reached full scale (ms), for the quality summary. */
  private inputPeak = 0;
  private lastClipMs = -Infinity;
  private peakTimer: ReturnType<typeof setInterval> | undefined;
  private publishedQuality: QualitySummary | null = null;
  private publishedQualityAt = 0;
  /** The recording state last published (JSON), so the room hears of it once a second at most. */
  private publishedRecording = 'null';
  /** The shared clock's timeline we follow (published as MemberState.clock), and what the worker was last told (JSON). */
  private clockState: ClockState | null = null;
  private clockRefSent = '';
  /** The base our worker fixed when we last took over the room's timeline (clock-base). */
  private clockTaken: TakenBase | null = null;
  private readonly joinedAt = Date.now();
  /** The lesson state last applied (the log tells what changed). */
  private lessonSeen: LessonState | null = null;
  /** The mix the teacher set for us: its version while in force, and our own mix from before it (Take back control restores it). */
  teacherMix: { v: number; before: { master: number; depth: number; adaptive: boolean; peers: [string, { gain: number; muted: boolean }][] } } | null = null;
  private teacherMixApplied = -1;

  private constructor(
    readonly identity: SessionIdentity,
    readonly choices: AudioChoices,
    readonly room: Room,
    /** Absent in remote mode: a paired phone sends no audio and opens no microphone. */
    readonly engine?: AudioEngine,
    readonly mesh?: AudioMesh,
    /** Recording track numbers of the participants we hear (a take's heard tracks). */
    readonly tracks = new TrackRegistry(),
    /** A lesson room's teacher authority on this device (a participant in a lesson room only). */
    readonly lesson?: Lesson,
  ) {
    super();
    this.access = room.access;
    this.roster = room.roster();
    this.log = new SessionLog(room.clientId);
    this.log.roster(this.roster, Date.now());
    this.devices = engine ? new DeviceChoice(engine) : undefined;
  }

  /**
   * Start the engine (unless remote), join the room and, for a participant, the audio mesh. Throws
   * what AudioEngine.start throws (TuttiError for what the user can fix), with nothing left running.
   * `test`: the test build's switches (null in every build users run).
   */
  static async start(identity: SessionIdentity, choices: AudioChoices, signalingUrl: string, test: EngineOptions['test'] | null): Promise<Session> {
    const remote = identity.remoteOf !== undefined;
    let engine: AudioEngine | undefined;
    try {
      if (!remote) {
        engine = await AudioEngine.start({
          channels: choices.channels,
          depth: choices.depth,
          adaptive: choices.adaptive,
          redundancy: choices.redundancy,
          ...(test ? { test } : {}),
        });
      }
      const iceServers = await effectiveIceServers();
      // A lesson room: this device's key for it (the creator's is the room key; IndexedDB keeps it).
      const lessonKey: LessonKey | undefined = !remote && isLessonRoom(identity.room) ? await lessonKeyFor(identity.room).catch(() => newLessonKey()) : undefined;
      const room = new Room({ name: identity.room, password: identity.password, signalingUrl, iceServers });
      const self: MemberState = {
        v: 1, name: identity.name.slice(0, 40), role: identity.role, instrument: identity.instrument.trim().slice(0, 40), muted: choices.muted,
        format: choices.channels === 1 ? 'mono' : 'stereo', kind: remote ? 'remote' : 'participant',
        ...(remote ? { controls: identity.remoteOf! } : { member: memberId(), audio: {}, mix: mixState(choices), bits: choices.bits, ...(__TUTTI_TEST__ && test?.wireV1 ? {} : { wire: WIRE_VERSION }), ...(engine && Number.isFinite(engine.micSinceMs) ? { micSince: engine.micSinceMs } : {}) }),
        ...(lessonKey ? { lessonKey: lessonKey.pub } : {}),
      };
      room.setSelf(self);
      // The choices carried over from the last room (or the join form): mute, channels, resolution.
      engine?.net.setSend(choices.channels, choices.muted, choices.bits, choices.perPacket);
      engine?.setClickGain(choices.click);
      const tracks = new TrackRegistry();
      // The lesson's events reach the session once it exists (verification is asynchronous).
      let session: Session | undefined;
      const lesson = lessonKey
        ? new Lesson(identity.room, room.lesson, room.clientId, lessonKey, () => session?.onLesson(), (why, by) => session?.onLessonRejected(why, by))
        : undefined;
      const mayLink = lesson ? (id: string): boolean => inLesson(lesson.view.state, room.clientId) && inLesson(lesson.view.state, Number(id)) : undefined;
      const mesh = engine ? new AudioMesh(room, engine.net, iceServers, tracks, mayLink) : undefined;
      session = new Session(identity, choices, room, engine, mesh, tracks, lesson);
      session.wire();
      if (lesson) void room.loaded.then(() => lesson.start());
      // The remembered devices: a device that cannot be opened leaves the default in use, and says so.
      void session.devices?.start().catch((err: unknown) => session.dispatchEvent(new CustomEvent('error', { detail: `Audio devices: ${err instanceof Error ? err.message : String(err)}` })));
      return session;
    } catch (err) {
      await engine?.stop();
      throw err;
    }
  }

  private changed(): void {
    this.dispatchEvent(new Event('change'));
  }

  private wire(): void {
    const room = this.room;
    room.onaccess = (a) => {
      this.access = a;
      this.changed();
    };
    room.onroster = () => {
      this.roster = room.roster();
      this.log.roster(this.roster, Date.now());
      this.followClock();
      this.applyMetronome();
      this.changed();
    };
    // The log's "who changed what": every setting and remote request, with the device that wrote it.
    room.settings.observe((ev) => {
      if (ev.transaction.origin === room.persistence) return; // this device's copy from an earlier visit, not a change now
      for (const key of ev.keysChanged) this.log.setting(key, room.settings.get(key), writerOf(room.settings, key), Date.now());
    });
    room.control.observe((ev) => {
      if (ev.transaction.origin === room.persistence) return;
      for (const key of ev.keysChanged) {
        const r = parseControlRequest(room.control.get(key));
        if (r) this.log.control(Number(key.split(':')[0]), r, writerOf(room.control as Y.Map<unknown>, key), Date.now());
      }
    });
    const apply = (): void => {
      this.applyRoomDepth();
      this.applyRoomRedundancy();
      this.applyRoomListing();
      this.applyMetronome();
    };
    room.settings.observe(apply);
    void room.loaded.then(apply);
    const { engine, mesh } = this;
    this.devices?.addEventListener('change', () => this.changed());
    if (engine && mesh) {
      mesh.onchange = () => {
        this.members = mesh.members();
        this.applyPeerMixes();
        this.applyLessonAudio();
        this.changed();
      };
      engine.net.on('stats', (s) => {
        this.stats = s;
        this.publishQuality(s);
        this.followClock();
        this.changed();
      });
      // The input meter's decaying peak, read 10 times a second (the summary wants the second's peak and any clip).
      this.peakTimer = setInterval(() => {
        const peak = engine.levels().self;
        if (peak > this.inputPeak) this.inputPeak = peak;
        if (peak >= FULL_SCALE) this.lastClipMs = Date.now();
      }, 100);
      engine.net.on('clock-base', (baseMs) => {
        if (this.clockState) this.clockTaken = { origin: this.clockState.origin, baseMs };
        this.followClock();
      });
      engine.net.on('error', (message) => this.dispatchEvent(new CustomEvent('error', { detail: message })));
      room.control.observe((ev) => {
        for (const key of ev.keysChanged) {
          if (!key.startsWith(`${room.clientId}:`)) continue;
          // In a lesson room only our own paired remote may change our mixer (the teacher's way is signed).
          const by = writerOf(room.control as Y.Map<unknown>, key);
          const writer = by === undefined ? undefined : this.roster.get(by);
          if (this.lesson && by !== room.clientId && !(writer?.kind === 'remote' && writer.controls === room.clientId)) {
            this.log.lessonIgnored('not your remote', by, Date.now());
            this.changed();
            continue;
          }
          this.applyControl(room.control.get(key));
        }
      });
    }
  }

  private applyRoomDepth(): void {
    const d = this.room.settings.get('depth');
    this.roomDepth = typeof d === 'number' ? d : undefined;
    if (this.roomDepth !== undefined && this.engine) this.setDepth(this.roomDepth, false);
    this.changed();
  }

  /**
   * Redundancy is what every sender in the room carries: one room-wide choice (a teacher sets it
   * once for the lesson), applied by each member's own network worker.
   */
  private applyRoomRedundancy(): void {
    const r = this.room.settings.get('redundancy');
    if (typeof r === 'number' && Number.isInteger(r) && r >= 0 && r <= MAX_REDUNDANCY && r !== this.choices.redundancy) {
      this.choices.redundancy = r;
      this.engine?.net.setRedundancy(r);
      this.changed();
    }
  }

  /**
   * The room's metronome and our advance in it, to the network worker when either changes (a
   * state no one could have meant, written by a member, is ignored: the last good one stays).
   */
  private applyMetronome(): void {
    const raw = this.room.settings.get(METRONOME_KEY);
    const m = raw === undefined ? null : parseMetronome(raw);
    if (raw !== undefined && !m) return;
    this.metronome = m;
    this.advance = advanceFor(m, this.room.clientId, this.roster);
    // A member following a leader: the leader's reports on the audio channel set the advance in
    // the network worker while they come (PROTOCOL.md §1.8b); this one is the fallback.
    // (advanceFor says 'leader' for the leader itself too: no leader to follow there.)
    const follows = m !== null && m.leader !== null && m.leader !== this.room.clientId && (this.advance.why === 'leader' || this.advance.why === 'measuring');
    const leaderPeerId = follows ? String(m.leader) : null;
    const json = JSON.stringify([m, this.advance.ms, leaderPeerId]);
    if (json !== this.metronomeSent && this.engine) {
      this.metronomeSent = json;
      this.engine.net.setMetronome(m, this.advance.ms, leaderPeerId);
    }
    this.changed();
  }

  /** The shared clock now, ms, or null before this device follows one. */
  sharedNowMs(): number | null {
    const d = this.stats?.clock.sharedMinusWallMs;
    return d === null || d === undefined ? null : performance.timeOrigin + performance.now() + d;
  }

  /** Start the room's metronome (every member's device), or throw why it cannot start yet. */
  startMetronome(): void {
    const now = this.sharedNowMs();
    if (now === null) throw new Error('The metronome waits for the shared clock: a few seconds after joining.');
    this.writeMetronome(started(this.metronome ?? DEFAULT_METRONOME, now));
  }

  stopMetronome(): void {
    if (this.metronome) this.writeMetronome(stopped(this.metronome));
  }

  /**
   * Change the room's metronome: tempo (kept on the beat while it runs), meter, accent, count-in,
   * or the mode (leader mode makes this device the leader).
   */
  setMetronome(change: { bpm?: number; beatsPerBar?: number; accent?: boolean; countInBars?: number; mode?: 'together' | 'leader' }): void {
    let m = this.metronome ?? DEFAULT_METRONOME;
    if (change.bpm !== undefined && change.bpm !== m.bpm) m = withTempo(m, change.bpm, this.sharedNowMs() ?? 0);
    if (change.beatsPerBar !== undefined) m = { ...m, beatsPerBar: change.beatsPerBar };
    if (change.accent !== undefined) m = { ...m, accent: change.accent };
    if (change.countInBars !== undefined) m = { ...m, countInBars: change.countInBars };
    if (change.mode === 'together') m = { ...m, mode: 'together', leader: null };
    if (change.mode === 'leader') m = { ...m, mode: 'leader', leader: this.room.clientId };
    this.writeMetronome(m);
  }

  private writeMetronome(m: MetronomeState): void {
    if (!parseMetronome(m)) throw new Error('That is not a metronome setting Tutti can play.');
    this.room.settings.set(METRONOME_KEY, m);
  }

  /** The click's volume on this device (0..1). */
  setClick(gain: number): void {
    this.choices.click = Math.min(1, Math.max(0, gain));
    this.engine?.setClickGain(this.choices.click);
    this.changed();
  }

  /**
   * Listing on the server's open rooms is a room setting too: every member who can read the room
   * announces it, so it stays listed while any of them is there.
   */
  private applyRoomListing(): void {
    const t = this.room.settings.get(LISTING_KEY);
    this.listingTitle = typeof t === 'string' ? t.slice(0, MAX_ROOM_TITLE) : undefined;
    this.room.setListing(this.listingTitle ?? null);
    this.changed();
  }

  /** A paired remote asked to change our mixer (Y.Map `control`, key `<our id>:<what>`). */
  private applyControl(raw: unknown): void {
    const r = parseControlRequest(raw);
    if (!r) return;
    if (r.master !== undefined) this.setMaster(r.master);
    if (r.depth !== undefined) this.setDepth(Math.round(r.depth), false);
    if (r.peer) this.setPeerMix(r.peer.id, r.peer.gain, r.peer.muted);
    if (r.record !== undefined) this.record(r.record);
  }

  /**
   * Record takes in this room with the page's recorder (it outlives the session), and publish
   * the take in progress for a paired remote: elapsed seconds, size, storage left.
   */
  attachRecorder(recorder: RecorderBridge): void {
    if (!this.engine || this.recorder) return;
    this.recorder = recorder;
    const publish = (): void => {
      const st = recorder.status;
      const rec: RecordingState | null = recorder.recording ? { seconds: Math.floor(st?.seconds ?? 0), bytes: st?.bytes ?? 0, leftBytes: st?.storageLeftBytes ?? null } : null;
      const json = JSON.stringify(rec);
      if (json === this.publishedRecording) return;
      this.publishedRecording = json;
      this.room.patchSelf({ recording: rec ?? undefined });
    };
    recorder.addEventListener('change', publish);
    this.offRecorder = () => recorder.removeEventListener('change', publish);
    publish();
  }

  /** Start (a take of this room) or stop recording, as the player or their paired remote asks. */
  record(on: boolean): void {
    const r = this.recorder;
    if (!r || !this.engine) return;
    if (on && !r.recording) r.start(this.engine, this.tracks, this.identity.room);
    else if (!on && r.recording) void r.stop();
  }

  /** Once a second, with the stats: how we hear each peer, our input, our depth (MemberState.quality). */
  private publishQuality(s: StatsMessage): void {
    const engine = this.engine;
    if (!engine) return;
    const peers = new Map(s.peers.map((p) => [p.peerId, engine.stats.peerHistory(p.peerId, QUALITY_WINDOW)] as const));
    const depth = this.choices.adaptive ? Math.max(0, ...s.peers.map((p) => p.fill.target)) || this.choices.depth : this.choices.depth;
    const now = Date.now();
    const clipping = now - this.lastClipMs < CLIP_HOLD_SECONDS * 1000;
    const q = qualitySummary(peers, this.inputPeak, clipping, depth);
    this.inputPeak = 0;
    // Awareness resends our whole state to everyone: at once when a light would change (or, leading
    // a leader-mode metronome, when a member's one-way delay moved: their advance), else every 5 s.
    const m = this.metronome;
    const leading = m !== null && m.startMs !== null && m.mode === 'leader' && m.leader === this.room.clientId;
    const p = this.publishedQuality;
    if (p && lightKey(q) === lightKey(p) && !(leading && advanceMoved(q, p)) && now - this.publishedQualityAt < QUALITY_REFRESH_MS) return;
    this.publishedQuality = q;
    this.publishedQualityAt = now;
    this.room.patchSelf({ quality: q });
  }

  /** On each roster and each stats: whose clock the room follows (src/room/shared-clock.ts); tell the room and the worker what changed. */
  private followClock(): void {
    const engine = this.engine;
    if (!engine) return;
    const now = Date.now();
    const d = decideClock(this.room.clientId, this.roster, this.clockState, this.clockTaken, now, now - this.joinedAt >= CLOCK_START_WAIT_MS);
    if (!d) return;
    if (JSON.stringify(d.state) !== JSON.stringify(this.clockState)) {
      this.clockState = d.state;
      this.room.patchSelf({ clock: d.state });
    }
    const ref = JSON.stringify(d.ref);
    if (ref !== this.clockRefSent) {
      this.clockRefSent = ref;
      engine.net.setClockRef(d.ref);
    }
  }

  private publishMix(): void {
    if (this.engine) this.room.patchSelf({ mix: mixState(this.choices) });
  }

  // ---- the lesson (a lesson room's teacher authority) ------------------------------------------

  /** The lesson state changed (verified): who links, who is muted, our mix; the log says what changed. */
  onLesson(): void {
    const s = this.lesson?.view.state ?? null;
    this.log.lesson(this.lessonSeen, s, Date.now());
    this.lessonSeen = s;
    this.mesh?.resync();
    this.applyLessonAudio();
    this.changed();
  }

  onLessonRejected(why: Rejected | 'older' | 'fork', by: number | undefined): void {
    this.log.lessonIgnored(why, by, Date.now());
    this.changed();
  }

  /** The teacher muted us. */
  get mutedByTeacher(): boolean {
    const s = this.lesson?.view.state;
    return !!s && s.muted.includes(this.room.clientId);
  }

  /** What the lesson asks of our audio: our send muted, peers muted, the mix the teacher set (once per version). */
  private applyLessonAudio(): void {
    const s = this.lesson?.view.state;
    const engine = this.engine;
    if (!s || !engine) return;
    const c = this.choices;
    this.applySend();
    this.applyPeerMixes();
    const mine = s.mixes[String(this.room.clientId)];
    if (mine && mine.v > this.teacherMixApplied) {
      this.teacherMixApplied = mine.v;
      const before = this.teacherMix?.before ?? { master: c.master, depth: c.depth, adaptive: c.adaptive, peers: [...c.mix] };
      this.teacherMix = { v: mine.v, before };
      if (mine.master !== undefined) this.setMaster(mine.master);
      if (mine.depth !== undefined || mine.adaptive !== undefined) this.setDepth(mine.depth ?? c.depth, mine.adaptive ?? c.adaptive);
      for (const [id, p] of Object.entries(mine.peers ?? {})) this.setPeerMix(id, p.gain, p.muted);
    }
  }

  /**
   * Every linked peer's gain and mute to the worker, as this player set them (muted too where the
   * teacher muted that peer). At each change of the links: a peer whose link is made again starts
   * at unity in the worker, while its strip still showed the player's setting.
   */
  private applyPeerMixes(): void {
    const engine = this.engine;
    if (!engine) return;
    const muted = this.lesson?.view.state?.muted ?? [];
    for (const m of this.members) {
      const mix = this.choices.mix.get(m.id);
      engine.net.setPeerMix(m.id, mix?.gain ?? 1, (mix?.muted ?? false) || muted.includes(Number(m.id)));
    }
  }

  /** Take control of our mix back from the teacher: our own mix from before theirs (until they set another). */
  takeBackMix(): void {
    const t = this.teacherMix;
    if (!t) return;
    this.teacherMix = null;
    this.setMaster(t.before.master);
    this.setDepth(t.before.depth, t.before.adaptive);
    for (const [id, p] of t.before.peers) this.setPeerMix(id, p.gain, p.muted);
    this.log.lessonTookBack(Date.now());
    this.changed();
  }

  /** A teacher's command (signed on this device; throws unless it holds the teacher key). */
  async lessonCommand(c: LessonCommand): Promise<void> {
    if (!this.lesson) throw new Error('This is not a lesson room.');
    await this.lesson.command(c);
  }

  /** Hand the teacher role to participant `id` (their device published its key). */
  async handOverLesson(id: number): Promise<void> {
    if (!this.lesson) throw new Error('This is not a lesson room.');
    const m = this.roster.get(id);
    if (!m?.lessonKey) throw new Error(`${m?.name ?? 'That member'}'s app cannot take the teacher role.`);
    await this.lesson.handOver(id, m.lessonKey);
  }

  /** Our send: muted by us, or by the teacher. */
  private applySend(): void {
    const c = this.choices;
    this.engine?.net.setSend(c.channels, c.muted || this.mutedByTeacher, c.bits, c.perPacket);
  }

  // ---- the player's controls -------------------------------------------------------------------

  toggleMute(): void {
    const c = this.choices;
    c.muted = !c.muted;
    this.applySend();
    this.room.patchSelf({ muted: c.muted });
    this.changed();
  }

  setChannels(channels: 1 | 2): void {
    this.choices.channels = channels;
    this.applySend();
    this.room.patchSelf({ format: channels === 1 ? 'mono' : 'stereo' });
    this.changed();
  }

  /** Send a packet every quantum (1) or every other one, carrying both (2): this device remembers it. */
  setPerPacket(perPacket: QuantaPerPacket): void {
    this.choices.perPacket = perPacket;
    localStorage.setItem(PER_PACKET_KEY, String(perPacket));
    this.applySend();
    this.changed();
  }

  /** Send 16- or 24-bit samples (24 to peers whose app decodes them, 16 to the others). */
  setBits(bits: SendBits): void {
    this.choices.bits = bits;
    localStorage.setItem(BITS_KEY, String(bits));
    this.applySend();
    this.room.patchSelf({ bits });
    this.changed();
  }

  /** A manual depth (quanta), or adaptive (the depth is then only the fallback for manual). */
  setDepth(depth: number, adaptive: boolean): void {
    this.choices.depth = Math.min(MAX_DEPTH, Math.max(MIN_DEPTH, depth));
    this.choices.adaptive = adaptive;
    this.engine?.net.setDepth(this.choices.depth, adaptive);
    this.publishMix();
    this.changed();
  }

  /** A room setting: applied here at once and, through the room document, by every member. */
  setRedundancy(frames: number): void {
    this.choices.redundancy = frames;
    this.engine?.net.setRedundancy(frames);
    this.room.settings.set('redundancy', frames);
    this.changed();
  }

  setMaster(gain: number): void {
    this.choices.master = Math.min(2, Math.max(0, gain));
    this.engine?.net.setMasterGain(this.choices.master);
    this.publishMix();
    this.changed();
  }

  setInputGain(gain: number): void {
    this.choices.inputGain = gain;
    this.engine?.setInputGain(gain);
    this.changed();
  }

  setPeerMix(peerId: string, gain: number, muted: boolean): void {
    this.choices.mix.set(peerId, { gain, muted });
    this.engine?.net.setPeerMix(peerId, gain, muted || (this.lesson?.view.state?.muted.includes(Number(peerId)) ?? false));
    this.publishMix();
    this.changed();
  }

  /** The room's default depth for everyone (a room setting). */
  setRoomDepth(depth: number): void {
    this.room.settings.set('depth', Math.min(MAX_DEPTH, Math.max(MIN_DEPTH, Math.round(depth) || DEFAULT_DEPTH)));
  }

  /** List the room on the server's open rooms under `title`, or (null) not. */
  setListed(title: string | null): void {
    if (title === null) this.room.settings.delete(LISTING_KEY);
    else this.room.settings.set(LISTING_KEY, title.slice(0, MAX_ROOM_TITLE));
  }

  // ---- the end -----------------------------------------------------------------------------------

  /** The page is going away: close the links now (no awaiting in pagehide). */
  abandon(): void {
    this.lesson?.close();
    this.offRecorder?.();
    clearInterval(this.peakTimer);
    this.devices?.stop();
    this.mesh?.leave();
    this.room.destroy();
  }

  async leave(): Promise<void> {
    this.lesson?.close();
    this.offRecorder?.();
    clearInterval(this.peakTimer);
    this.devices?.stop();
    this.mesh?.leave();
    if (this.engine) {
      // Forget control requests addressed to us: our client id is never reused.
      for (const k of [...this.room.control.keys()]) if (k.startsWith(`${this.room.clientId}:`)) this.room.control.delete(k);
    }
    this.room.destroy();
    await this.engine?.stop();
  }
}

function mixState(c: AudioChoices): MixState {
  return { master: c.master, depth: c.depth, adaptive: c.adaptive, peers: Object.fromEntries(c.mix) };
}

/** Our own signaling server on the page's host: the only one y-webrtc may use. */
export function ownSignalingUrl(): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/signal`;
}
