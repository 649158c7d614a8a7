// Messages between the synthetic-sender page and its sender worker (P4 scale scenario).

/** A new synthetic peer's audio channel, transferred right after creation. */
export interface SynthAddMessage {
  type: 'add';
  id: string;
  channel: RTCDataChannel;
}
export type ToSender = SynthAddMessage;

export interface SynthOpenMessage {
  type: 'open';
  id: string;
}
export interface SenderStats {
  peers: number;
  /** Packets sent, over all peers. */
  sent: number;
  /** Packets not sent because a channel's buffer was over the congestion limit. */
  congested: number;
  /** Quanta the sender skipped because its own timer fell more than a ring behind. */
  skipped: number;
}
export interface SynthStatsMessage {
  type: 'stats';
  stats: SenderStats;
}
export type FromSender = SynthOpenMessage | SynthStatsMessage;
