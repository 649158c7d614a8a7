// Device-truth probe page (bench only): the two ends of what Tutti's one-way figure dates, with the
// browser APIs the app uses and nothing else. Input: the microphone's MediaStreamTrackProcessor
// read in a worker (AudioData.timestamp, as workers/track-capture.ts). Output: an AudioContext as
// the app opens it, clicking at known context times, and its getOutputTimestamp() read twenty
// times a second (as src/engine/output-clock.ts). bench/m2e/segments/ holds both against when
// the sound really reached the microphone and left the speaker.

import type { ProbeInputReport, ProbeOutputReport } from './probe-protocol.ts';
import workerUrl from './probe-input.worker.ts?worker&url';

const RATE = 48_000;
const AUDIO = { echoCancellation: false, noiseSuppression: false, autoGainControl: false, latency: 0, sampleRate: RATE, channelCount: 2 };

let worker: Worker | null = null;
const out: ProbeOutputReport = { clickContextS: [], readContextS: [], readWallMs: [], readCurrentS: [], readNowMs: [], outputLatencyS: [], baseLatencyS: [] };
const alive: unknown[] = [];

window.__probeStart = async (periodS: number, latencyHint: number | AudioContextLatencyCategory = 0) => {
  const stream = await navigator.mediaDevices.getUserMedia({ audio: AUDIO, video: false });
  const track = stream.getAudioTracks()[0]!;
  const Processor = (window as unknown as { MediaStreamTrackProcessor: new (o: { track: MediaStreamTrack }) => { readable: ReadableStream<AudioData> } }).MediaStreamTrackProcessor;
  const readable = new Processor({ track }).readable;
  worker = new Worker(workerUrl, { type: 'module' });
  worker.postMessage({ type: 'start', readable }, [readable as unknown as Transferable]);

  const ctx = new AudioContext({ sampleRate: RATE, latencyHint });
  await ctx.resume();
  const pulse = ctx.createBuffer(1, RATE, RATE);
  pulse.getChannelData(0).fill(0.5, 0, Math.round(RATE * 0.002));
  let next = Math.ceil(ctx.currentTime) + 1;
  const timer = setInterval(() => {
    while (next < ctx.currentTime + 1) {
      const src = ctx.createBufferSource();
      src.buffer = pulse;
      src.connect(ctx.destination);
      src.start(next);
      out.clickContextS.push(next);
      next += periodS;
    }
    const ts = ctx.getOutputTimestamp();
    if (ts.contextTime !== undefined && ts.performanceTime !== undefined && ts.contextTime > 0) {
      out.readContextS.push(ts.contextTime);
      out.readWallMs.push(performance.timeOrigin + ts.performanceTime);
      out.readCurrentS.push(ctx.currentTime);
      out.readNowMs.push(performance.timeOrigin + performance.now());
      out.outputLatencyS.push(ctx.outputLatency);
      out.baseLatencyS.push(ctx.baseLatency);
    }
  }, 50);
  alive.push(stream, ctx, timer);
};

window.__probeReport = async () => {
  const input = await new Promise<ProbeInputReport>((resolve) => {
    worker!.onmessage = (e: MessageEvent<ProbeInputReport>) => resolve(e.data);
    worker!.postMessage({ type: 'report' });
  });
  return { input, output: out, pageTimeOrigin: performance.timeOrigin };
};

window.__probeSilence = async () => {
  // A second stream into the speaker's sink, as the sender's page adds in set-up C (its output at volume 0).
  const ctx = new AudioContext({ sampleRate: RATE, latencyHint: 0 });
  const osc = ctx.createConstantSource();
  osc.offset.value = 2 ** -30;
  osc.connect(ctx.destination);
  osc.start();
  await ctx.resume();
  alive.push(ctx, osc);
};
