// The page's audio engine: opens the microphone without speech processing, builds the
// AudioContext with the capture and playback worklets, and starts the network worker over shared
// memory. After start() the page only sends control messages; it never sees an audio frame.

import { DEFAULT_DEPTH, DEFAULT_REDUNDANCY, SAMPLE_RATE } from '../shared/constants.ts';
import { CAP_F32, PEER_F32, PLAY_F32, PLAY_I32, PlaybackViews, captureMeterView, createCaptureMemory, createPlaybackMemory } from '../shared/memory-layout.ts';
import type { TestOptions } from '../shared/worker-protocol.ts';
import { CAPTURE_PROCESSOR, PLAYBACK_PROCESSOR, type CaptureProcessorOptions, type PlaybackProcessorOptions } from '../shared/worklet-options.ts';
import captureWorkletUrl from '../../worklets/capture.worklet.ts?worker&url';
import playbackWorkletUrl from '../../worklets/playback.worklet.ts?worker&url';
import { TuttiError, isolationError, micError } from './errors.ts';
import { keepDeviceAwake } from './keep-device-awake.ts';
import { reportOutputClock } from './output-clock.ts';
import { NetBridge } from './net-bridge.ts';
import { StatsRecorder } from './stats-recorder.ts';

export type CapturePath = 'track' | 'worklet';

/** MediaStreamTrackProcessor, which TypeScript's DOM types do not declare yet (the worker's do). */
type TrackProcessorConstructor = new (init: { track: MediaStreamTrack }) => { readonly readable: ReadableStream<AudioData> };

export interface EngineOptions {
  channels: 1 | 2;
  depth?: number;
  /** Adaptive jitter depth (default on); `depth` is then only the starting point. */
  adaptive?: boolean;
  /** Redundant frames per packet (0..3, default DEFAULT_REDUNDANCY). */
  redundancy?: number;
  test?: TestOptions;
}

/** Levels for the meters, read from shared memory (never audio frames). */
export interface Levels {
  self: number;
  master: number;
  clipped: number;
  peer(slot: number): number;
}

export class AudioEngine {
  readonly net: NetBridge;
  /** Every stats message of this session with its receive time (sparklines, quality, JSON export). */
  readonly stats = new StatsRecorder();
  private readonly captureControl: Float32Array;
  private readonly playback: PlaybackViews;
  private readonly stopOutputClock: () => void;

  private constructor(
    readonly context: AudioContext,
    private readonly stream: MediaStream,
    /** How the microphone reaches the network worker: its track read in the worker, or the capture worklet (fallback). */
    readonly capturePath: CapturePath,
    net: NetBridge,
    captureControl: Float32Array,
    playback: PlaybackViews,
  ) {
    this.net = net;
    this.captureControl = captureControl;
    this.playback = playback;
    net.on('stats', (m) => this.stats.push(m));
    this.stopOutputClock = reportOutputClock(context, net);
  }

  static async start(opts: EngineOptions): Promise<AudioEngine> {
    if (!globalThis.crossOriginIsolated || typeof SharedArrayBuffer === 'undefined') throw isolationError();
    if (!navigator.mediaDevices?.getUserMedia) throw new TuttiError('no-input', 'This browser cannot capture audio here: open Tutti over https or on localhost.');
    let stream: MediaStream;
    try {
      // `latency` is in the Media Capture spec but not yet in TypeScript's DOM types.
      const audio: MediaTrackConstraints & { latency: number } = {
        echoCancellation: false,
        noiseSuppression: false,
        autoGainControl: false,
        latency: 0,
        sampleRate: SAMPLE_RATE,
        channelCount: opts.channels,
      };
      stream = await navigator.mediaDevices.getUserMedia({ audio, video: false });
    } catch (err) {
      throw micError(err);
    }
    if (stream.getAudioTracks().length === 0) throw new TuttiError('no-input', 'No audio input device was found. Plug one in, then press Join again.');

    const context = new AudioContext({ sampleRate: SAMPLE_RATE, latencyHint: 0 });
    if (!context.audioWorklet) throw new TuttiError('no-audioworklet', 'This browser has no AudioWorklet support; use a current Chromium, Chrome or Edge.');
    await context.audioWorklet.addModule(captureWorkletUrl);
    await context.audioWorklet.addModule(playbackWorkletUrl);

    const capture = createCaptureMemory();
    const playbackSab = createPlaybackMemory();
    const net = new NetBridge({
      capture,
      playback: playbackSab,
      channels: opts.channels,
      depth: opts.depth ?? DEFAULT_DEPTH,
      adaptive: opts.adaptive ?? true,
      redundancy: opts.redundancy ?? DEFAULT_REDUNDANCY,
      ...(opts.test ? { test: opts.test } : {}),
    });
    await net.ready;

    // The microphone goes to the network worker straight from its track where the browser can
    // (workers/track-capture.ts says why); else through the capture worklet and the ring.
    const track = stream.getAudioTracks()[0]!;
    const Processor = (globalThis as { MediaStreamTrackProcessor?: TrackProcessorConstructor }).MediaStreamTrackProcessor;
    const capturePath: CapturePath = Processor && track.getSettings().sampleRate === SAMPLE_RATE ? 'track' : 'worklet';
    if (capturePath === 'track') {
      net.setCaptureSource(new Processor!({ track }).readable);
    } else {
      const captureNode = new AudioWorkletNode(context, CAPTURE_PROCESSOR, {
        numberOfInputs: 1,
        numberOfOutputs: 0,
        processorOptions: { capture } satisfies CaptureProcessorOptions,
      });
      context.createMediaStreamSource(stream).connect(captureNode);
    }
    const playbackNode = new AudioWorkletNode(context, PLAYBACK_PROCESSOR, {
      numberOfInputs: 0,
      numberOfOutputs: 1,
      outputChannelCount: [2],
      processorOptions: { playback: playbackSab } satisfies PlaybackProcessorOptions,
    });
    playbackNode.connect(context.destination);
    keepDeviceAwake(context);
    await context.resume();
    return new AudioEngine(context, stream, capturePath, net, captureMeterView(capture), new PlaybackViews(playbackSab));
  }

  /** Gain applied to the microphone before sending (0–4, linear); the worker reads it from shared memory. */
  setInputGain(gain: number): void {
    this.captureControl[CAP_F32.INPUT_GAIN] = Math.min(4, Math.max(0, gain));
  }

  /** Current meter levels; values may be one quantum old (single-writer floats, see memory-layout). */
  levels(): Levels {
    const f = this.playback.f32;
    return {
      self: this.captureControl[CAP_F32.PEAK] ?? 0,
      master: f[PLAY_F32.MASTER_PEAK] ?? 0,
      clipped: Atomics.load(this.playback.i32, PLAY_I32.CLIPPED),
      peer: (slot) => f[this.playback.peerF32(slot, PEER_F32.PEAK)] ?? 0,
    };
  }

  /** Output latency the device adds after our playout (s), when the browser reports it. */
  outputLatency(): number {
    const d = this.deviceLatency();
    return d.outputLatencyS + d.baseLatencyS;
  }

  /**
   * The two output terms of the one-way estimate, seconds: `AudioContext.outputLatency` (audio
   * graph output to the device; 0 where the browser does not report it) and `baseLatency`.
   */
  deviceLatency(): { outputLatencyS: number; baseLatencyS: number } {
    return { outputLatencyS: this.context.outputLatency || 0, baseLatencyS: this.context.baseLatency || 0 };
  }

  async stop(): Promise<void> {
    this.stopOutputClock();
    this.net.terminate();
    for (const t of this.stream.getTracks()) t.stop();
    await this.context.close();
  }
}
