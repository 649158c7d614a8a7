// What a room member is told about who else is in the room and whether the password matches
// (main thread, no DOM): the evidence from the room's signaling topic goes in, an Access comes
// out. The rule (docs/PROTOCOL.md §3.6): the server's subscriber count is never evidence of a
// wrong password, since a socket that subscribes and never speaks adds to it; only a payload our
// key cannot read is. Members answer such a payload once (`answerUnreadable`), so a newcomer
// with a different password always gets that evidence from the room's members.

/**
 * 'connecting': just joined. 'alone': nobody else is subscribed to the room's topic.
 * 'waiting': others are subscribed but none has sent anything (a silent socket, or a member still
 * starting): no claim about the password. 'connected': a peer with our password is here (its
 * awareness reached us). 'wrong-password': others who were here before us send what our key
 * cannot read, and none connected. 'intruder': the same, but it came from someone who arrived
 * after us, so it is the newcomer whose password differs. Alone, any password is "right": the
 * first one used makes the room.
 */
export type Access = 'connecting' | 'alone' | 'waiting' | 'connected' | 'wrong-password' | 'intruder';

/** How long after joining the evidence is judged (so a slow first connection is not misread). */
export const WRONG_PASSWORD_AFTER_MS = 6000;
/** A member answers unreadable payloads at most this often (a stranger's flood is not amplified). */
export const ANSWER_INTERVAL_MS = 2000;
/**
 * Envelope field (outside the encryption, so anyone can read it) marking a member's answer to an
 * unreadable payload: an answer is never answered, so two members with different passwords do not
 * answer each other forever. y-webrtc ignores the field; the hub relays it as sent.
 */
export const ANSWER_FIELD = 'tutti-answer';

/** One relay on our topic, as `Room` saw it. */
export interface Relay {
  /** The hub's subscriber count (us included), if the relay carried one. */
  clients: number | null;
  /** Our key could read the payload (our own echoes are readable). */
  readable: boolean;
  /** The sender marked it as an answer (ANSWER_FIELD). */
  answer: boolean;
}

export class AccessTracker {
  access: Access = 'connecting';
  /** Subscribers the server reported for the room's topic (including us), from the last relay. */
  topicClients = 0;
  /** Payloads on our topic that our key could not read. */
  foreign = 0;
  /** The subscriber count on the first relay after we joined: who was here before us. */
  private joinClients = 0;
  /** The subscriber count on the latest unreadable relay. */
  private foreignClients = 0;
  /** `foreign` when a peer was last connected; -1 if none ever was. */
  private foreignMark = -1;
  private lastAnswerMs = -Infinity;

  constructor(private readonly joinedMs: number) {}

  /** Record one relay; true if we should answer it now (see ANSWER_FIELD). */
  relay(r: Relay, nowMs: number): boolean {
    if (r.clients !== null && Number.isInteger(r.clients) && r.clients > 0) {
      this.topicClients = r.clients;
      if (this.joinClients === 0) this.joinClients = r.clients;
    }
    if (r.readable) return false;
    this.foreign++;
    this.foreignClients = this.topicClients;
    if (r.answer || nowMs - this.lastAnswerMs < ANSWER_INTERVAL_MS) return false;
    this.lastAnswerMs = nowMs;
    return true;
  }

  /** The access now, given how many peers' awareness states reached us (us excluded). */
  update(others: number, nowMs: number): Access {
    if (others > 0) this.foreignMark = this.foreign;
    // After a peer has connected, only unreadable signaling that arrives later is evidence.
    const mismatch = this.foreignMark >= 0 ? this.foreign > this.foreignMark : this.foreign > 0;
    const settled = nowMs - this.joinedMs >= WRONG_PASSWORD_AFTER_MS;
    let a: Access;
    if (others > 0) a = 'connected';
    else if (mismatch && settled) {
      // It came from someone who arrived after us (we were alone, or the count grew since we
      // joined): they hold the other password. Otherwise those who were here first do.
      const theyCameLater = this.access === 'alone' || this.access === 'intruder' || (this.joinClients > 0 && this.foreignClients > this.joinClients);
      a = theyCameLater ? 'intruder' : 'wrong-password';
    } else if (mismatch) a = this.access === 'alone' ? 'alone' : 'connecting';
    // No relay yet once settled (signaling unreachable), or everyone we knew has left (the count
    // is stale until the next relay): alone.
    else if (this.topicClients === 1 || (settled && (this.topicClients === 0 || this.foreignMark >= 0))) a = 'alone';
    else if (settled) a = 'waiting';
    else a = this.access === 'alone' ? 'alone' : 'connecting';
    this.access = a;
    return a;
  }
}
