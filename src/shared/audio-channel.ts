// The audio DataChannel, defined once for every place that opens or recognises it: the room's
// audio mesh, Check my setup's local loopback, and the bench's synthetic members.
//
// Unordered and unreliable: a late frame is worthless and a retransmission would only delay the
// frames behind it (PROTOCOL.md §1). The page creates it; the network worker owns it after the
// transfer.

/** Label of the worker-owned audio channel (y-webrtc's own channels carry other labels). */
export const AUDIO_CHANNEL_LABEL = 'tutti-audio';

/** RTCDataChannelInit (typed structurally: src/shared also compiles without the DOM types). */
export const AUDIO_CHANNEL_INIT = { ordered: false, maxRetransmits: 0 } as const;
