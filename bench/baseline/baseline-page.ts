// Baseline bench page (main thread): the JackTrip-WebRTC main-branch design, as the P3 scenario's
// point of comparison. Capture worklet → postMessage → main thread (encode, DataChannel send) →
// loopback RTCPeerConnection pair in this page → main thread (DataChannel receive) → postMessage →
// playback worklet with a de-jitter queue. Only the thread the audio crosses differs from Tutti:
// the same wire format, send-side congestion rule, depth and late definition.

import { DEFAULT_DEPTH, SAMPLE_RATE } from '../../src/shared/constants.ts';
import { MAX_PACKET_BYTES, encodePacket } from '../../src/shared/wire.ts';
import type { BaselineCaptureMessage, BaselineCounters, BaselineCountersMessage, ToBaselinePlayback } from './baseline-protocol.ts';
import captureUrl from './capture.worklet.ts?worker&url';
import playbackUrl from './playback.worklet.ts?worker&url';

/** The same congestion rule as Tutti's network worker: above this, frames are dropped, not queued. */
const MAX_BUFFERED_BYTES = 32 * 1024;

export interface BaselineSnapshot {
  counters: BaselineCounters;
  sent: number;
  sendDropped: number;
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

async function start(depth: number): Promise<() => BaselineSnapshot> {
  const ctx = new AudioContext({ sampleRate: SAMPLE_RATE, latencyHint: 0 });
  await ctx.audioWorklet.addModule(captureUrl);
  await ctx.audioWorklet.addModule(playbackUrl);
  const { tx, rx } = await connectLoopback();

  const playback = new AudioWorkletNode(ctx, 'baseline-playback', { numberOfInputs: 0, numberOfOutputs: 1, outputChannelCount: [2] });
  playback.connect(ctx.destination);
  playback.port.postMessage({ type: 'depth', depth } satisfies ToBaselinePlayback);
  let counters: BaselineCounters = { received: 0, late: 0, duplicates: 0, rejected: 0, resyncs: 0, played: 0, missed: 0 };
  playback.port.onmessage = (ev: MessageEvent<BaselineCountersMessage>) => (counters = ev.data.counters);
  rx.binaryType = 'arraybuffer';
  rx.onmessage = (ev: MessageEvent<ArrayBuffer>) => playback.port.postMessage({ type: 'packet', packet: ev.data } satisfies ToBaselinePlayback, [ev.data]);

  const packet = new Uint8Array(MAX_PACKET_BYTES);
  const view = new DataView(packet.buffer);
  const streamId = 1 + Math.floor(Math.random() * 255);
  let seq = (Math.random() * 2 ** 32) >>> 0;
  let sent = 0;
  let sendDropped = 0;
  const capture = new AudioWorkletNode(ctx, 'baseline-capture', { numberOfInputs: 1, numberOfOutputs: 0 });
  capture.port.onmessage = (ev: MessageEvent<BaselineCaptureMessage>) => {
    const len = encodePacket(packet, view, ev.data.samples, 2, streamId, seq, Math.round((performance.timeOrigin + performance.now()) * 1000));
    seq = (seq + 1) >>> 0;
    if (tx.bufferedAmount > MAX_BUFFERED_BYTES) {
      sendDropped++;
      return;
    }
    tx.send(packet.subarray(0, len));
    sent++;
  };
  const tone = new OscillatorNode(ctx, { frequency: 440 });
  const gain = new GainNode(ctx, { gain: 0.5 });
  tone.connect(gain).connect(capture);
  tone.start();
  await ctx.resume();
  return () => ({ counters, sent, sendDropped });
}

declare global {
  interface Window {
    /** Starts the baseline at `depth` quanta; resolves once frames flow. */
    __baselineStart: (depth?: number) => Promise<void>;
    __baselineSnapshot: () => BaselineSnapshot;
  }
}
window.__baselineStart = async (depth = DEFAULT_DEPTH) => {
  const snapshot = await start(depth);
  window.__baselineSnapshot = snapshot;
};
