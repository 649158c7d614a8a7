// y-webrtc's signaling protocol (WebSocket, JSON text frames), spoken by Tutti's server and by
// unmodified y-webrtc clients, plus the payloads Tutti publishes in a room topic to set up the
// audio mesh. Imported by the page (src/room) and the server (server/).

/** Client → server. */
export type SignalingClientMessage =
  | { type: 'subscribe'; topics: string[] }
  | { type: 'unsubscribe'; topics: string[] }
  | { type: 'publish'; topic: string; data?: unknown; [extra: string]: unknown }
  | { type: 'ping' };

/** Server → client. A publish is relayed to every subscriber of the topic, the sender included. */
export type SignalingServerMessage =
  | { type: 'publish'; topic: string; data?: unknown; clients: number; [extra: string]: unknown }
  | { type: 'pong' };

/** WebSocket close codes the server uses (4000–4999 is the application range). */
export const CloseCode = {
  /** Sent by `ws` itself for a frame over maxPayload. */
  MESSAGE_TOO_BIG: 1009,
  TOO_MANY_TOPICS: 4001,
  RATE_LIMITED: 4002,
  PING_TIMEOUT: 4003,
} as const;

/** Topic under which a room's audio mesh is negotiated. */
export function audioTopic(room: string): string {
  return `tutti-audio:${room}`;
}

/** Audio-mesh payloads carried as `data` of a publish in the audio topic. */
export type MeshMessage =
  /** "I am here" (broadcast), or a reply to one peer's hello (`to` set). */
  | { type: 'tutti-hello'; from: string; to?: string; name: string }
  /** SDP or an ICE candidate for one peer. */
  | { type: 'tutti-signal'; from: string; to: string; description?: RTCSessionDescriptionInitLike; candidate?: RTCIceCandidateInitLike | null }
  /** Leaving the room. */
  | { type: 'tutti-bye'; from: string };

/** Structural copies of the DOM init dictionaries, so the server compiles without DOM types. */
export interface RTCSessionDescriptionInitLike {
  type: 'offer' | 'answer' | 'pranswer' | 'rollback';
  sdp?: string;
}
export interface RTCIceCandidateInitLike {
  candidate?: string;
  sdpMid?: string | null;
  sdpMLineIndex?: number | null;
  usernameFragment?: string | null;
}

/** Narrow an untrusted payload to a MeshMessage, or null. */
export function parseMeshMessage(data: unknown): MeshMessage | null {
  if (typeof data !== 'object' || data === null) return null;
  const d = data as Record<string, unknown>;
  if (typeof d['from'] !== 'string' || d['from'].length > 64) return null;
  switch (d['type']) {
    case 'tutti-hello':
      if (typeof d['name'] !== 'string' || (d['to'] !== undefined && typeof d['to'] !== 'string')) return null;
      return d as MeshMessage;
    case 'tutti-signal':
      if (typeof d['to'] !== 'string') return null;
      return d as MeshMessage;
    case 'tutti-bye':
      return d as MeshMessage;
    default:
      return null;
  }
}
