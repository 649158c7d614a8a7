// Baseline bench page (main thread): the JackTrip-WebRTC main-branch design, as the P3 scenario's
// point of comparison. Capture worklet → postMessage → main thread (encode, DataChannel send) →
// loopback RTCPeerConnection pair in this page → main thread (DataChannel receive) → postMessage →
// playback worklet with a de-jitter queue. What the P3 comparison is about, the thread the audio
// crosses, differs from Tutti; the sender follows Tutti's rules with Tutti's own code (the same wire
// format and redundant copies, the send queue's age rule and the governor that sheds copies on a
// congested link), and the queue Tutti's late definition. The depth stays fixed: docs/BENCHMARKS.md
// (P3, the baseline) lists what still differs and why.

import { SAMPLE_RATE } from '../../src/shared/constants.ts';
import { MAX_PACKET_BYTES, RedundancyHistory, encodePacket, packetBytes } from '../../src/shared/wire.ts';
import { SendGovernor } from '../../workers/send-governor.ts';
import { SendQueue } from '../../workers/send-queue.ts';
import type { BaselineCaptureMessage, BaselineCounters, BaselineCountersMessage, ToBaselinePlayback } from './baseline-protocol.ts';
import captureUrl from './capture.worklet.ts?worker&url';
import playbackUrl from './playback.worklet.ts?worker&url';

/** How the bench sets the baseline up (bench/scenarios/baseline.ts passes Tutti's values of the same run). */
export interface BaselineOptions {
  /** Fixed de-jitter depth, quanta. */
  depth: number;
  /** Redundant copies per packet (Tutti's room setting). */
  redundancy: number;
  /** Drop a frame, rather than queue it, when the channel's oldest queued byte has waited longer (Tutti's MAX_QUEUE_MS). */
  maxQueueMs: number;
}

export interface BaselineSnapshot {
  counters: BaselineCounters;
  /** Frames the queue stored from redundant copies. */
  recovered: number;
  sent: number;
  sendDropped: number;
  /** Copies the governor lets the sender carry now, and whether it sends mono (the bottom of its ladder). */
  copies: number;
  mono: boolean;
}

async function connectLoopback(): Promise<{ tx: RTCDataChannel; rx: RTCDataChannel; close(): void }> {
  const a = new RTCPeerConnection();
  const b = new RTCPeerConnection();
  a.onicecandidate = (e) => void (e.candidate && b.addIceCandidate(e.candidate));
  b.onicecandidate = (e) => void (e.candidate && a.addIceCandidate(e.candidate));
  const tx = a.createDataChannel('baseline-audio', { ordered: false, maxRetransmits: 0 });
  const rxReady = new Promise<RTCDataChannel>((resolve) => (b.ondatachannel = (e) => resolve(e.channel)));
  await a.setLocalDescription(await a.createOffer());
  await b.setRemoteDescription(a.localDescription!);
  await b.setLocalDescription(await b.createAnswer());
  await a.setRemoteDescription(b.localDescription!);
  const rx = await rxReady;
  const opened = (ch: RTCDataChannel) => (ch.readyState === 'open' ? Promise.resolve() : new Promise<void>((r) => ch.addEventListener('open', () => r(), { once: true })));
  await Promise.all([opened(tx), opened(rx)]);
  return { tx, rx, close: () => { a.close(); b.close(); } };
}

async function start({ depth, redundancy: roomRedundancy, maxQueueMs }: BaselineOptions): Promise<() => BaselineSnapshot> {
  const ctx = new AudioContext({ sampleRate: SAMPLE_RATE, latencyHint: 0 });
  await ctx.audioWorklet.addModule(captureUrl);
  await ctx.audioWorklet.addModule(playbackUrl);
  const { tx, rx } = await connectLoopback();

  const playback = new AudioWorkletNode(ctx, 'baseline-playback', { numberOfInputs: 0, numberOfOutputs: 1, outputChannelCount: [2] });
  playback.connect(ctx.destination);
  playback.port.postMessage({ type: 'depth', depth } satisfies ToBaselinePlayback);
  let counters: BaselineCounters = { received: 0, late: 0, duplicates: 0, rejected: 0, resyncs: 0, played: 0, missed: 0 };
  let recovered = 0;
  playback.port.onmessage = (ev: MessageEvent<BaselineCountersMessage>) => {
    counters = ev.data.counters;
    recovered = ev.data.recovered;
  };
  rx.binaryType = 'arraybuffer';
  rx.onmessage = (ev: MessageEvent<ArrayBuffer>) => playback.port.postMessage({ type: 'packet', packet: ev.data } satisfies ToBaselinePlayback, [ev.data]);

  const packet = new Uint8Array(MAX_PACKET_BYTES);
  const view = new DataView(packet.buffer);
  const streamId = 1 + Math.floor(Math.random() * 255);
  let seq = (Math.random() * 2 ** 32) >>> 0;
  const monoPacket = new Uint8Array(packetBytes(1, false));
  const monoView = new DataView(monoPacket.buffer);
  const history = new RedundancyHistory();
  // Tutti's sender rules, with its own code: the age of the channel's backlog decides a drop, and a
  // link that keeps dropping sheds copies (then stereo) once a second, as workers/sender.ts and net.worker.ts do.
  const queue = new SendQueue();
  const governor = new SendGovernor(performance.now());
  let copies = governor.copies(roomRedundancy);
  let mono = false;
  let droppedSeen = 0;
  let sent = 0;
  let sendDropped = 0;
  setInterval(() => {
    governor.tick(performance.now(), sendDropped !== droppedSeen, roomRedundancy);
    droppedSeen = sendDropped;
    copies = governor.copies(roomRedundancy);
    mono = governor.mono;
  }, 1000);
  const capture = new AudioWorkletNode(ctx, 'baseline-capture', { numberOfInputs: 1, numberOfOutputs: 0 });
  capture.port.onmessage = (ev: MessageEvent<BaselineCaptureMessage>) => {
    const captureUs = Math.round((performance.timeOrigin + performance.now()) * 1000);
    // Encoded with copies even when the frame goes out mono or is dropped: the history must hold
    // every quantum for the copies of the next packets, as in Tutti.
    history.frames = copies;
    let bytes = packet.subarray(0, encodePacket(packet, view, ev.data.samples, 2, streamId, seq, captureUs, history));
    if (mono) bytes = monoPacket.subarray(0, encodePacket(monoPacket, monoView, ev.data.samples, 1, streamId, seq, captureUs));
    seq = (seq + 1) >>> 0;
    const now = performance.now();
    if (queue.congested(tx, now, maxQueueMs)) {
      sendDropped++;
      return;
    }
    queue.send(tx, bytes, now);
    sent++;
  };
  const tone = new OscillatorNode(ctx, { frequency: 440 });
  const gain = new GainNode(ctx, { gain: 0.5 });
  tone.connect(gain).connect(capture);
  tone.start();
  await ctx.resume();
  return () => ({ counters, recovered, sent, sendDropped, copies, mono });
}

declare global {
  interface Window {
    /** Starts the baseline; resolves once the connection is up and the audio graph runs. */
    __baselineStart: (options: BaselineOptions) => Promise<void>;
    __baselineSnapshot: () => BaselineSnapshot;
  }
}
// No defaults: the scenario passes Tutti's values, so nothing here can silently drift from them.
window.__baselineStart = async (options) => {
  const snapshot = await start(options);
  window.__baselineSnapshot = snapshot;
};
