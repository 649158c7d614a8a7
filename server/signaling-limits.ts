// Every bound of the signaling hub (server/signaling.ts), in one place: its default, and what
// crossing it does. docs/PROTOCOL.md §3.3 lists the same keys (a unit test keeps them in step)
// and GET /healthz reports the values in force. Node only.

export interface SignalingLimits {
  /** Largest frame in bytes. Bigger: `ws` closes the socket with 1009 before we see it. */
  maxPayload: number;
  /** Deepest nesting of arrays and objects in a frame. Deeper: the frame is dropped (counted). */
  maxDepth: number;
  /** Longest topic name, in UTF-16 units. Longer or empty: that name is skipped (counted). */
  maxTopicLength: number;
  /** Topics one socket may hold. One more: close 4001. */
  maxTopicsPerSocket: number;
  /** Topics on the server. A new topic beyond it: that subscription is skipped (counted). */
  maxTopics: number;
  /** Sockets subscribed to one topic. One more: that subscription is skipped (counted). */
  maxSubscribersPerTopic: number;
  /** Open sockets on the server. One more: the upgrade is answered HTTP 503. */
  maxSockets: number;
  /** Open sockets from one remote address. One more: the upgrade is answered HTTP 429. */
  maxSocketsPerAddress: number;
  /** Frames per second one socket may send (token bucket, burst = 2 s worth). Over: close 4002. */
  rateLimit: number;
  /**
   * Bytes per second one socket may cause: each frame it sends plus every copy relayed for it
   * (token bucket, burst = 2 s worth). Over: close 4002.
   */
  byteRateLimit: number;
  /**
   * Frames per second all sockets of one remote address may send together (token bucket, burst =
   * 2 s worth), so that reconnecting buys no fresh burst. Over: the socket that sent it, close 4002.
   */
  addressRateLimit: number;
  /**
   * Bytes per second all sockets of one remote address may send together (frames received only:
   * relayed copies count against each sender's own `byteRateLimit`). Over: close 4002.
   */
  addressByteRateLimit: number;
  /** Bytes waiting to be sent to one socket (ws `bufferedAmount`). Over: the socket is cut (1006). */
  maxBufferedBytes: number;
  /** A socket that sends no pong to our pings for this long is closed (4003); pinged every half. */
  pingTimeoutMs: number;
  /** Rooms one socket may list on the open-rooms list. Over: the announce is dropped (counted). */
  maxAnnouncedPerSocket: number;
  /** Rooms the open-rooms list holds. Over: the announce is dropped (counted). */
  maxOpenRooms: number;
}

/** Burst of both token buckets, in seconds of their rate. */
export const BURST_SECONDS = 2;

export const DEFAULT_SIGNALING_LIMITS: Readonly<SignalingLimits> = Object.freeze({
  maxPayload: 64 * 1024,
  maxDepth: 32,
  maxTopicLength: 256,
  maxTopicsPerSocket: 32,
  maxTopics: 4096,
  maxSubscribersPerTopic: 64,
  maxSockets: 1000,
  maxSocketsPerAddress: 128,
  rateLimit: 200,
  byteRateLimit: 8 * 1024 * 1024,
  addressRateLimit: 5000,
  addressByteRateLimit: 32 * 1024 * 1024,
  maxBufferedBytes: 1024 * 1024,
  pingTimeoutMs: 30_000,
  maxAnnouncedPerSocket: 4,
  maxOpenRooms: 200,
});

/** The hub's whole configuration: the limits, who may connect, and whether rooms may be listed. */
export interface SignalingOptions extends SignalingLimits {
  /**
   * Page origins allowed to open a socket besides the default ones (the page's own origin, i.e.
   * an Origin whose host equals the request's Host header, and localhost / 127.0.0.1 / [::1] on
   * any port). Normalised origins such as `https://tutti.example.org`; `*` allows any origin.
   */
  allowedOrigins: string[];
  /** Keep the open-rooms list (GET /rooms); false = every `tutti-announce` is dropped. */
  openRooms: boolean;
}

export const DEFAULT_SIGNALING_OPTIONS: Readonly<SignalingOptions> = Object.freeze({
  ...DEFAULT_SIGNALING_LIMITS,
  allowedOrigins: [],
  openRooms: true,
});
