// Messages of the room layer: y-webrtc's signaling protocol (WebSocket, JSON text frames) spoken
// by Tutti's server and unmodified y-webrtc clients; and what Tutti puts in a room's Yjs awareness
// (the roster entry, the audio SDP mailbox, a participant's mixer) and its control requests.
// Imported by the page (src/room) and the server (server/); no DOM types here.

/**
 * Client → server. The first four are y-webrtc's; the `tutti-` ones are Tutti's extension for
 * the open-rooms list (an unmodified y-webrtc client never sends them, and Tutti's client only
 * sends them to Tutti's server, which answers every other type it does not know by dropping it).
 */
export type SignalingClientMessage =
  | { type: 'subscribe'; topics: string[] }
  | { type: 'unsubscribe'; topics: string[] }
  /** Dropped unless this socket is subscribed to `topic`. */
  | { type: 'publish'; topic: string; data?: unknown; [extra: string]: unknown }
  | { type: 'ping' }
  /** List `topic` (which this socket must be subscribed to) on GET /rooms while it stays subscribed. */
  | { type: 'tutti-announce'; topic: string; title: string; locked: boolean }
  | { type: 'tutti-unannounce'; topic: string };

/** Longest title the open-rooms list keeps (longer ones are cut). */
export const MAX_ROOM_TITLE = 60;

/** One entry of GET /rooms: a room that a member chose to list on this server. */
export interface OpenRoom {
  room: string;
  title: string;
  /** The room has a password (its members said so; the server cannot check). */
  locked: boolean;
  /** Sockets subscribed to the room's topic now (members, including any with a wrong password). */
  connected: number;
}

/** Parse GET /rooms' body; entries that are not well-formed are left out. */
export function parseOpenRooms(body: unknown): OpenRoom[] {
  const rooms = typeof body === 'object' && body !== null ? (body as { rooms?: unknown }).rooms : undefined;
  if (!Array.isArray(rooms)) return [];
  const out: OpenRoom[] = [];
  for (const r of rooms as Record<string, unknown>[]) {
    if (typeof r !== 'object' || r === null) continue;
    const { room, title, locked, connected } = r;
    if (typeof room === 'string' && room.length > 0 && typeof title === 'string' && typeof locked === 'boolean' && typeof connected === 'number' && Number.isInteger(connected) && connected >= 0) {
      out.push({ room, title: title.slice(0, MAX_ROOM_TITLE), locked, connected });
    }
  }
  return out;
}

/**
 * Server → client. A publish (from a socket subscribed to its topic) is relayed to every
 * subscriber of the topic, the sender included, as the bytes the sender sent with the hub's
 * `clients` (subscribers now) appended: JSON.parse keeps the last of duplicate keys, so a
 * sender's own `clients` never survives.
 */
export type SignalingServerMessage =
  | { type: 'publish'; topic: string; data?: unknown; clients: number; [extra: string]: unknown }
  | { type: 'pong' };

/**
 * WebSocket close codes the server uses (4000–4999 is the application range). A socket cut for
 * not reading (server/signaling-limits.ts `maxBufferedBytes`) gets no close frame: it would queue
 * behind the data it is not reading; its peer sees 1006.
 */
export const CloseCode = {
  /** Sent by `ws` itself for a frame over maxPayload. */
  MESSAGE_TOO_BIG: 1009,
  /** A handler failed on this socket's frame: this socket is closed, nothing else is affected. */
  INTERNAL_ERROR: 1011,
  TOO_MANY_TOPICS: 4001,
  RATE_LIMITED: 4002,
  PING_TIMEOUT: 4003,
} as const;

// ── Room awareness ─────────────────────────────────────────────────────────────────────────────
// Every client of a room publishes one MemberState as its y-webrtc awareness state. Awareness
// travels only over the room's peer-to-peer y-webrtc connections, which exist only between peers
// that share the room password (y-webrtc encrypts its signaling with it); so the roster and the
// audio SDP below never pass through the server.

export const ROLES = ['teacher', 'student', 'listener'] as const;
export type Role = (typeof ROLES)[number];

/** One side of an audio link's negotiation, addressed to one peer (non-trickle: candidates in the SDP). */
export interface AudioSdp {
  /** Negotiation generation chosen by the offerer; an answer echoes its offer's gen. */
  gen: number;
  type: 'offer' | 'answer';
  sdp: string;
}

/** A participant's own mixer, published so a paired remote can show it. Keys are peer ids. */
export interface MixState {
  master: number;
  /** The manual depth (quanta): in use when `adaptive` is false, the fallback otherwise. */
  depth: number;
  /** The depth is automatic (the one in use is in MemberState.quality.depth). Absent in older apps: read as manual. */
  adaptive?: boolean;
  peers: Record<string, { gain: number; muted: boolean }>;
}

export interface MemberState {
  v: 1;
  name: string;
  role: Role;
  instrument: string;
  /** Self-muted (sends silence). */
  muted: boolean;
  format: 'mono' | 'stereo';
  /** The sample resolution the member sends (absent: 16; apps before PCM24 do not say). */
  bits?: 16 | 24;
  /**
   * The highest audio wire version the member's app decodes (src/shared/wire.ts WIRE_VERSION;
   * absent: 1, an app before PCM24). A PCM24 sender sends PCM16 to a member below 2.
   */
  wire?: number;
  /**
   * When the member's microphone stream began (wall clock, ms since the epoch; absent in apps
   * before it, and for a remote). A listener whose stream from this member begins within a few
   * seconds of it sees the member's capture from its start (workers/depth-controller.ts, "Start-up").
   */
  micSince?: number;
  /** 'participant' sends and receives audio; 'remote' is a phone controlling one participant. */
  kind: 'participant' | 'remote';
  /**
   * A random id the member's browser keeps (localStorage) across rooms and restarts: the same
   * person leaving and rejoining is recognised by it (a take keeps one track for them). Absent in
   * apps before it; they are recognised by name.
   */
  member?: string;
  /** For a remote: the client id it controls. */
  controls?: number;
  /** Audio SDP mailbox, keyed by the addressee's client id (a participant only). */
  audio?: Record<string, AudioSdp>;
  mix?: MixState;
  /** A take this participant's device is recording (for their paired remote), or absent. */
  recording?: RecordingState;
  /** How this participant hears the others and their own input (the room's connection view): at once when a light would change, else every 5 s. */
  quality?: QualitySummary;
  /** The shared clock's timeline this participant follows (src/room/shared-clock.ts); absent in apps before it. */
  clock?: ClockState;
  /**
   * In a lesson room: this device's public key for the room (raw P-256, base64), so the teacher
   * can hand the role to it (src/room/lesson-authority.ts). Absent elsewhere.
   */
  lessonKey?: string;
}

/**
 * A timeline of the shared clock, as a participant publishes it: `ref`, the client id whose clock
 * it follows (its own: it is the reference); `origin`, when the timeline began, ms on the shared
 * clock (the oldest wins); `base`, published by the reference: shared clock = its clock + base, ms.
 */
export interface ClockState {
  ref: number;
  origin: number;
  base: number;
}

/** How a participant hears one peer (QualitySummary.heard). */
export interface HeardSummary {
  glitchPercent: number;
  rttMs: number | null;
  /**
   * The one-way delay from that peer's microphone to this participant's speaker, ms (the median of
   * the last 10 s; the metronome's leader mode advances that peer's clicks by it). Absent before
   * the first, and in apps before it.
   */
  oneWayMs?: number;
}

/**
 * What a participant publishes about their connections (src/room/quality-summary.ts): every
 * member's view puts the two ends of each pair together (src/ui/tutti-connections.ts).
 */
export interface QualitySummary {
  /**
   * Per peer they hear, by that peer's client id: glitches they heard from it over the last 10 s
   * (late, lost, underrun, trimmed), % of the frames expected, and the DataChannel round trip, ms
   * (null before the first).
   */
  heard: Record<string, HeardSummary>;
  /** Peak input level over the last second, dBFS (−99 for silence). */
  inputDb: number;
  /** The input reached full scale within the last 10 s. */
  clipping: boolean;
  /** Jitter depth in use, quanta (the automatic one, or the manual choice). */
  depth: number;
}

/** A take being recorded, as a participant publishes it for their paired remote (1 Hz). */
export interface RecordingState {
  /** Elapsed, whole seconds. */
  seconds: number;
  /** Written so far, all tracks. */
  bytes: number;
  /** Storage left on that device, or null when the browser does not say. */
  leftBytes: number | null;
}

/** A remote's wanted change to one participant's mixer (Y.Map `control`, key = target client id). */
export interface ControlRequest {
  /** Increases with each request from that remote; the target applies each seq once. */
  seq: number;
  from: number;
  master?: number;
  depth?: number;
  peer?: { id: string; gain: number; muted: boolean };
  /** Start (true) or stop (false) recording a take on the target's device. */
  record?: boolean;
}

const str = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max;
const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Narrow an untrusted awareness state to a MemberState, or null (peers may run other versions). */
export function parseMemberState(data: unknown): MemberState | null {
  if (typeof data !== 'object' || data === null) return null;
  const d = data as Record<string, unknown>;
  if (d['v'] !== 1 || !str(d['name'], 40) || !ROLES.includes(d['role'] as Role) || !str(d['instrument'], 40)) return null;
  if (typeof d['muted'] !== 'boolean' || (d['format'] !== 'mono' && d['format'] !== 'stereo')) return null;
  if (d['kind'] !== 'participant' && d['kind'] !== 'remote') return null;
  if (d['controls'] !== undefined && !num(d['controls'])) return null;
  if (d['bits'] !== undefined && d['bits'] !== 16 && d['bits'] !== 24) return null;
  if (d['wire'] !== undefined && !(num(d['wire']) && Number.isInteger(d['wire']) && d['wire'] >= 1)) return null;
  if (d['micSince'] !== undefined && !num(d['micSince'])) return null;
  if (d['member'] !== undefined && !str(d['member'], 64)) return null;
  if (d['lessonKey'] !== undefined && !str(d['lessonKey'], 200)) return null;
  const audio: Record<string, AudioSdp> = {};
  if (typeof d['audio'] === 'object' && d['audio'] !== null) {
    for (const [k, v] of Object.entries(d['audio'] as Record<string, unknown>)) {
      const s = parseAudioSdp(v);
      if (s) audio[k] = s;
    }
  }
  const m = d as unknown as MemberState;
  const { recording: _recording, quality: _quality, clock: _clock, ...rest } = m; // checked below
  const recording = parseRecording(d['recording']);
  const quality = parseQuality(d['quality']);
  const clock = parseClock(d['clock']);
  return { ...rest, audio, ...(parseMix(d['mix']) ? { mix: parseMix(d['mix'])! } : {}), ...(recording ? { recording } : {}), ...(quality ? { quality } : {}), ...(clock ? { clock } : {}) };
}

function parseClock(v: unknown): ClockState | null {
  if (typeof v !== 'object' || v === null) return null;
  const c = v as Record<string, unknown>;
  if (!num(c['ref']) || !num(c['origin']) || !num(c['base'])) return null;
  return { ref: c['ref'], origin: c['origin'], base: c['base'] };
}

function parseQuality(v: unknown): QualitySummary | null {
  if (typeof v !== 'object' || v === null) return null;
  const q = v as Record<string, unknown>;
  if (!num(q['inputDb']) || typeof q['clipping'] !== 'boolean' || !num(q['depth']) || typeof q['heard'] !== 'object' || q['heard'] === null) return null;
  const heard: QualitySummary['heard'] = {};
  for (const [k, h] of Object.entries(q['heard'] as Record<string, unknown>).slice(0, 64)) {
    const e = h as Record<string, unknown> | null;
    if (e && num(e['glitchPercent']) && (e['rttMs'] === null || num(e['rttMs']))) {
      heard[k] = { glitchPercent: e['glitchPercent'], rttMs: e['rttMs'] as number | null, ...(num(e['oneWayMs']) && e['oneWayMs'] >= 0 && e['oneWayMs'] < 10_000 ? { oneWayMs: e['oneWayMs'] } : {}) };
    }
  }
  return { heard, inputDb: q['inputDb'], clipping: q['clipping'], depth: q['depth'] };
}

function parseRecording(v: unknown): RecordingState | null {
  if (typeof v !== 'object' || v === null) return null;
  const r = v as Record<string, unknown>;
  if (!num(r['seconds']) || !num(r['bytes']) || (r['leftBytes'] !== null && !num(r['leftBytes']))) return null;
  return { seconds: r['seconds'], bytes: r['bytes'], leftBytes: r['leftBytes'] as number | null };
}

function parseAudioSdp(v: unknown): AudioSdp | null {
  if (typeof v !== 'object' || v === null) return null;
  const s = v as Record<string, unknown>;
  if (!num(s['gen']) || (s['type'] !== 'offer' && s['type'] !== 'answer') || !str(s['sdp'], 64 * 1024)) return null;
  return { gen: s['gen'], type: s['type'], sdp: s['sdp'] };
}

function parseMix(v: unknown): MixState | null {
  if (typeof v !== 'object' || v === null) return null;
  const m = v as Record<string, unknown>;
  if (!num(m['master']) || !num(m['depth']) || typeof m['peers'] !== 'object' || m['peers'] === null) return null;
  const peers: MixState['peers'] = {};
  for (const [k, p] of Object.entries(m['peers'] as Record<string, unknown>)) {
    const q = p as Record<string, unknown> | null;
    if (q && num(q['gain']) && typeof q['muted'] === 'boolean') peers[k] = { gain: q['gain'], muted: q['muted'] };
  }
  return { master: m['master'], depth: m['depth'], ...(typeof m['adaptive'] === 'boolean' ? { adaptive: m['adaptive'] } : {}), peers };
}

/** Narrow an untrusted control request, or null. */
export function parseControlRequest(data: unknown): ControlRequest | null {
  if (typeof data !== 'object' || data === null) return null;
  const d = data as Record<string, unknown>;
  if (!num(d['seq']) || !num(d['from'])) return null;
  if (d['master'] !== undefined && !num(d['master'])) return null;
  if (d['depth'] !== undefined && !num(d['depth'])) return null;
  const p = d['peer'] as Record<string, unknown> | undefined;
  if (p !== undefined && (typeof p !== 'object' || p === null || !str(p['id'], 64) || !num(p['gain']) || typeof p['muted'] !== 'boolean')) return null;
  if (d['record'] !== undefined && typeof d['record'] !== 'boolean') return null;
  return d as unknown as ControlRequest;
}
