// Mouth-to-ear reference page (main thread): the browser's own paths from the microphone to the
// speaker that Tutti is measured against, A (Web Audio straight through: the floor of the
// browser's audio I/O), W (plain WebRTC media: what a video call does) and B (two worklets and a
// FIFO, the floor of any worklet chain such as Tutti's). Nothing here is Tutti.

import { FIFO, fifoBuffer } from './fifo.ts';
import captureUrl from './fifo-capture.worklet.ts?worker&url';
import playbackUrl from './fifo-playback.worklet.ts?worker&url';
import type { PathInfo } from './m2e-protocol.ts';

const SAMPLE_RATE = 48_000;

/**
 * Every processing step off and the smallest latency the device allows, as Tutti captures.
 * (`latency` is in the Media Capture spec but not yet in TypeScript's DOM types.)
 */
const AUDIO: MediaTrackConstraints & { latency: number } = {
  echoCancellation: false,
  noiseSuppression: false,
  autoGainControl: false,
  latency: 0,
  sampleRate: SAMPLE_RATE,
  channelCount: 2,
};
const MICROPHONE: MediaStreamConstraints = { audio: AUDIO, video: false };

/** The running paths: referenced so they are not collected while the bench listens. */
const alive: unknown[] = [];
/** The context that plays to the speaker in A or B (W plays through a media element). */
let output: AudioContext | null = null;

function trackInfo(stream: MediaStream): Pick<PathInfo, 'inputLatencyMs' | 'sampleRate' | 'channelCount'> {
  const s = stream.getAudioTracks()[0]?.getSettings() as (MediaTrackSettings & { latency?: number }) | undefined;
  return {
    inputLatencyMs: typeof s?.latency === 'number' ? s.latency * 1000 : null,
    sampleRate: s?.sampleRate ?? null,
    channelCount: s?.channelCount ?? null,
  };
}

window.__m2eDirect = async () => {
  const stream = await navigator.mediaDevices.getUserMedia(MICROPHONE);
  const ctx = new AudioContext({ sampleRate: SAMPLE_RATE, latencyHint: 0 });
  ctx.createMediaStreamSource(stream).connect(ctx.destination);
  await ctx.resume();
  alive.push(stream, ctx);
  output = ctx;
  return { ...trackInfo(stream), baseLatencyMs: ctx.baseLatency * 1000, outputLatencyMs: ctx.outputLatency * 1000 };
};

window.__m2eWebRtc = async () => {
  const stream = await navigator.mediaDevices.getUserMedia(MICROPHONE);
  const tx = new RTCPeerConnection();
  const rx = new RTCPeerConnection();
  tx.onicecandidate = (e) => void (e.candidate && rx.addIceCandidate(e.candidate));
  rx.onicecandidate = (e) => void (e.candidate && tx.addIceCandidate(e.candidate));
  const remote = new Promise<MediaStream>((resolve) => (rx.ontrack = (e) => resolve(e.streams[0] ?? new MediaStream([e.track]))));
  for (const t of stream.getAudioTracks()) tx.addTrack(t, stream);
  await tx.setLocalDescription(await tx.createOffer());
  await rx.setRemoteDescription(tx.localDescription!);
  await rx.setLocalDescription(await rx.createAnswer());
  await tx.setRemoteDescription(rx.localDescription!);
  // Remote WebRTC audio plays only through a media element; this is how a call page plays it.
  const audio = document.createElement('audio');
  audio.autoplay = true;
  audio.srcObject = await remote;
  document.body.append(audio);
  await audio.play();
  alive.push(stream, tx, rx, audio);
  let codec: string | undefined;
  for (let i = 0; i < 50 && !codec; i++) {
    (await tx.getStats()).forEach((r: { type: string; mimeType?: string; clockRate?: number; channels?: number }) => {
      if (r.type === 'codec' && r.mimeType?.startsWith('audio/')) codec = `${r.mimeType} ${r.clockRate}/${r.channels ?? 1}`;
    });
    if (!codec) await new Promise((r) => setTimeout(r, 100));
  }
  return { ...trackInfo(stream), baseLatencyMs: null, outputLatencyMs: null, ...(codec ? { codec } : {}) };
};

let fifo: Int32Array | null = null;

window.__m2eWorklets = async (contexts: 1 | 2, prefillQuanta: number) => {
  const stream = await navigator.mediaDevices.getUserMedia(MICROPHONE);
  const sab = fifoBuffer(prefillQuanta);
  const capture = new AudioContext({ sampleRate: SAMPLE_RATE, latencyHint: 0 });
  const playback = contexts === 1 ? capture : new AudioContext({ sampleRate: SAMPLE_RATE, latencyHint: 0 });
  await capture.audioWorklet.addModule(captureUrl);
  await playback.audioWorklet.addModule(playbackUrl);
  const inNode = new AudioWorkletNode(capture, 'm2e-fifo-capture', { numberOfInputs: 1, numberOfOutputs: 0, channelCount: 2, channelCountMode: 'explicit', processorOptions: { sab } });
  capture.createMediaStreamSource(stream).connect(inNode);
  const outNode = new AudioWorkletNode(playback, 'm2e-fifo-playback', { numberOfInputs: 0, numberOfOutputs: 1, outputChannelCount: [2], processorOptions: { sab } });
  outNode.connect(playback.destination);
  await Promise.all([capture.resume(), playback.resume()]);
  fifo = new Int32Array(sab, 0, 8);
  // The two contexts start at different moments, so the fill after start is arbitrary: hold it at
  // the prefill from here on.
  window.__m2eFifoReset();
  alive.push(stream, capture, playback, inNode, outNode);
  output = playback;
  return { ...trackInfo(stream), baseLatencyMs: playback.baseLatency * 1000, outputLatencyMs: playback.outputLatency * 1000 };
};

window.__m2eFifoReset = () => {
  if (fifo) Atomics.store(fifo, FIFO.RESET, 1);
};

window.__m2eFifoCounters = () => ({
  underruns: fifo ? Atomics.load(fifo, FIFO.UNDERRUNS) : 0,
  overflows: fifo ? Atomics.load(fifo, FIFO.OVERFLOWS) : 0,
});

window.__m2eSpeakerDropouts = () => {
  const stats = (output as (AudioContext & { playbackStats?: { underrunEvents: number; underrunDuration: number } }) | null)?.playbackStats;
  return stats && typeof stats.underrunEvents === 'number' ? { events: stats.underrunEvents, ms: Math.round(stats.underrunDuration * 1e4) / 10 } : null;
};
