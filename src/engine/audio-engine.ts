// The page's audio engine: opens the microphone without speech processing, builds the
// AudioContext with the capture and playback worklets, and starts the network worker over shared
// memory. After start() the page only sends control messages; it never sees an audio frame.

import type { InputChannels } from '../shared/input-channels.ts';
import { DEFAULT_DEPTH, DEFAULT_REDUNDANCY, SAMPLE_RATE } from '../shared/constants.ts';
import { CAP_F32, MET_F32, MET_F64, MET_I32, MetronomeViews, PEER_F32, PLAY_F32, PLAY_I32, PlaybackViews, captureMeterView, createCaptureMemory, createMetronomeMemory, createPlaybackMemory, type HeardMemory, type RecordMemory } from '../shared/memory-layout.ts';
import type { TestOptions } from '../shared/worker-protocol.ts';
import { CAPTURE_PROCESSOR, PLAYBACK_PROCESSOR, type CaptureProcessorOptions, type FromPlaybackWorklet, type PlaybackProcessorOptions, type ToPlaybackWorklet } from '../shared/worklet-options.ts';
import captureWorkletUrl from '../../worklets/capture.worklet.ts?worker&url';
import playbackWorkletUrl from '../../worklets/playback.worklet.ts?worker&url';
import { setContextOutput } from './devices.ts';
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
  /** Input device id to open ('' or absent: the system default). */
  inputDeviceId?: string;
  test?: TestOptions;
}

/** The microphone without speech processing; `latency` is in the Media Capture spec but not yet in TypeScript's DOM types. */
function micConstraints(channels: 1 | 2, deviceId: string): MediaTrackConstraints & { latency: number } {
  return {
    echoCancellation: false,
    noiseSuppression: false,
    autoGainControl: false,
    latency: 0,
    sampleRate: SAMPLE_RATE,
    channelCount: channels,
    ...(deviceId ? { deviceId: { exact: deviceId } } : {}),
  };
}

/** Levels for the meters, read from shared memory (never audio frames). */
export interface Levels {
  self: number;
  master: number;
  clipped: number;
  peer(slot: number): number;
}

/** The metronome's last beat rendered here: its number and the context time its click started, s. */
export interface BeatRendered {
  beat: number;
  atS: number;
}

/**
 * Test build only: the playback output's onsets (worklets/test-onset-tap.ts), each with a reading
 * of the output clock taken as the page heard of it, so a test can date it at the speaker.
 */
export interface OutputOnset {
  frame: number;
  peak: number;
  contextTime: number;
  wallMs: number;
}

export class AudioEngine {
  readonly net: NetBridge;
  /** Test build with the onsets switch: every onset of our playback output so far. */
  readonly onsets: OutputOnset[] = [];
  /** Every stats message of this session with its receive time (sparklines, quality, JSON export). */
  readonly stats = new StatsRecorder();
  /**
   * When the microphone's stream began (wall clock, ms since the epoch): getUserMedia's answer,
   * which opens the device. Published as MemberState.micSince (a listener's playout reads it).
   */
  micSinceMs = NaN;
  private readonly captureControl: Float32Array;
  private readonly playback: PlaybackViews;
  private readonly stopOutputClock: () => void;
  /** The microphone stream in use (replaced by setInputDevice), and replaced ones the worker may still read. */
  private stream: MediaStream;
  private readonly retiring = new Set<MediaStream>();
  /** On the worklet capture path: the capture node, and the microphone's source node feeding it. */
  private readonly captureNode: AudioWorkletNode | null;
  private micSource: MediaStreamAudioSourceNode | null;
  /** Which input channels we send (src/shared/input-channels.ts). */
  private inputChannels: InputChannels = 'both';

  private constructor(
    readonly context: AudioContext,
    stream: MediaStream,
    /** How the microphone reaches the network worker: its track read in the worker, or the capture worklet (fallback). */
    readonly capturePath: CapturePath,
    net: NetBridge,
    captureControl: Float32Array,
    playback: PlaybackViews,
    capture: { node: AudioWorkletNode; source: MediaStreamAudioSourceNode } | null,
    private readonly channels: 1 | 2,
    private readonly playbackNode: AudioWorkletNode,
    private readonly metronome: MetronomeViews,
  ) {
    this.stream = stream;
    this.captureNode = capture?.node ?? null;
    this.micSource = capture?.source ?? null;
    this.net = net;
    this.captureControl = captureControl;
    this.playback = playback;
    net.on('stats', (m) => this.stats.push(m));
    this.stopOutputClock = reportOutputClock(context, net);
    if (__TUTTI_TEST__) {
      playbackNode.port.onmessage = (ev: MessageEvent<FromPlaybackWorklet>) => {
        const ts = context.getOutputTimestamp();
        this.onsets.push({ frame: ev.data.frame, peak: ev.data.peak, contextTime: ts.contextTime ?? NaN, wallMs: performance.timeOrigin + (ts.performanceTime ?? NaN) });
      };
    }
  }

  static async start(opts: EngineOptions): Promise<AudioEngine> {
    if (!globalThis.crossOriginIsolated || typeof SharedArrayBuffer === 'undefined') throw isolationError();
    if (!navigator.mediaDevices?.getUserMedia) throw new TuttiError('no-input', 'This browser cannot capture audio here: open Tutti over https or on localhost.');
    let stream: MediaStream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: micConstraints(opts.channels, opts.inputDeviceId ?? ''), video: false });
    } catch (err) {
      throw micError(err);
    }
    if (stream.getAudioTracks().length === 0) throw new TuttiError('no-input', 'No audio input device was found. Plug one in, then press Join again.');
    const micSinceMs = Date.now();

    const context = new AudioContext({ sampleRate: SAMPLE_RATE, latencyHint: 0 });
    if (!context.audioWorklet) throw new TuttiError('no-audioworklet', 'This browser has no AudioWorklet support; use a current Chromium, Chrome or Edge.');
    await context.audioWorklet.addModule(captureWorkletUrl);
    await context.audioWorklet.addModule(playbackWorkletUrl);

    const capture = createCaptureMemory();
    const playbackSab = createPlaybackMemory();
    const metronome = createMetronomeMemory();
    const net = new NetBridge({
      capture,
      playback: playbackSab,
      metronome,
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
    let worklet: { node: AudioWorkletNode; source: MediaStreamAudioSourceNode } | null = null;
    if (capturePath === 'track') {
      net.setCaptureSource(new Processor!({ track }).readable);
    } else {
      const node = new AudioWorkletNode(context, CAPTURE_PROCESSOR, {
        numberOfInputs: 1,
        numberOfOutputs: 0,
        processorOptions: { capture } satisfies CaptureProcessorOptions,
      });
      const source = context.createMediaStreamSource(stream);
      source.connect(node);
      worklet = { node, source };
    }
    const playbackNode = new AudioWorkletNode(context, PLAYBACK_PROCESSOR, {
      numberOfInputs: 0,
      numberOfOutputs: 1,
      outputChannelCount: [2],
      processorOptions: { playback: playbackSab, metronome, ...(__TUTTI_TEST__ && opts.test?.onsetTap ? { tap: true } : {}) } satisfies PlaybackProcessorOptions,
    });
    playbackNode.connect(context.destination);
    keepDeviceAwake(context);
    await context.resume();
    const engine = new AudioEngine(context, stream, capturePath, net, captureMeterView(capture), new PlaybackViews(playbackSab), worklet, opts.channels, playbackNode, new MetronomeViews(metronome));
    engine.micSinceMs = micSinceMs;
    return engine;
  }

  /**
   * A take starts (its record ring and heard ring) or stops (nulls). The network worker pushes our
   * dry input and dates the first heard render at the speaker; the playback worklet pushes what it
   * renders, per participant and mixed, while the heard block's ON is 1 (the caller sets it).
   */
  record(input: RecordMemory | null, heard: HeardMemory | null): void {
    this.net.record(input, heard);
    if (heard) this.playbackNode.port.postMessage({ type: 'record-heard', heard } satisfies ToPlaybackWorklet);
  }

  /** The input device id in use ('' where the browser does not say). */
  inputDeviceId(): string {
    return this.stream.getAudioTracks()[0]?.getSettings().deviceId ?? '';
  }

  /**
   * Switches the microphone to device `id` ('' = the system default) without leaving the room: the
   * new track goes to the network worker (or the capture worklet) and the old one stops; peers
   * keep receiving the same stream, sequence and all. Throws TuttiError if the device cannot be
   * opened; the old microphone then stays in use.
   */
  async setInputDevice(id: string): Promise<void> {
    let stream: MediaStream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: micConstraints(this.captureChannels(), id), video: false });
    } catch (err) {
      throw micError(err);
    }
    const track = stream.getAudioTracks()[0];
    if (!track) throw new TuttiError('no-input', 'That input device gave no audio track.');
    if (this.capturePath === 'track') {
      const Processor = (globalThis as { MediaStreamTrackProcessor?: TrackProcessorConstructor }).MediaStreamTrackProcessor!;
      this.net.setCaptureSource(new Processor({ track }).readable);
    } else {
      const source = this.context.createMediaStreamSource(stream);
      source.connect(this.captureNode!);
      this.micSource?.disconnect();
      this.micSource = source;
    }
    const old = this.stream;
    this.stream = stream;
    if (this.capturePath === 'track') {
      // The worker reads the old track until the new one delivers (no gap for the listeners),
      // then says so: only then is the old one stopped.
      this.retiring.add(old);
      const off = this.net.on('capture-switched', () => {
        off();
        this.retiring.delete(old);
        for (const t of old.getTracks()) t.stop();
      });
    } else {
      for (const t of old.getTracks()) t.stop();
    }
  }

  /** Channels to open the microphone with: both where we send stereo or pick one of two. */
  private captureChannels(): 1 | 2 {
    return this.channels === 2 || this.inputChannels !== 'both' ? 2 : 1;
  }

  /** Channels the input device gives us now. */
  inputChannelCount(): number {
    return this.stream.getAudioTracks()[0]?.getSettings().channelCount ?? 1;
  }

  /** Why the input channels cannot be chosen here, or null. */
  inputChannelsUnavailable(): string | null {
    return this.capturePath === 'worklet'
      ? 'Here the browser gives Tutti the microphone through its audio graph, which mixes the channels: choose them in the system or interface settings.'
      : null;
  }

  /**
   * Sends the input device's channel 1, channel 2, or both as stereo, from its next capture buffer
   * on. A device opened with one channel (mono send) is opened again with two to pick one of them.
   */
  async setInputChannels(channels: InputChannels): Promise<void> {
    const why = this.inputChannelsUnavailable();
    if (why) throw new TuttiError('no-input', why);
    this.inputChannels = channels;
    this.net.setInputChannels(channels);
    if (channels !== 'both' && this.inputChannelCount() < 2) await this.setInputDevice(this.inputDeviceId());
  }

  /**
   * Sends our playback to output device `id` ('' = the system default); throws where the browser
   * cannot (devices.ts). Chromium suspends a context whose output device went away (seen on the
   * rig when a sink was unloaded), and a new sink does not resume it: resume it here.
   */
  async setOutputDevice(id: string): Promise<void> {
    await setContextOutput(this.context, id);
    if (this.context.state === 'suspended') await this.context.resume();
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

  /** The click's volume here, 0..1 (0: the click muted; the beat light still runs). */
  setClickGain(gain: number): void {
    this.metronome.f32[MET_F32.GAIN] = Math.min(1, Math.max(0, gain));
  }

  /** The metronome's last beat rendered here, or null before any (memory-layout.ts MET_I32.CLICKED_BEAT). */
  beatRendered(): BeatRendered | null {
    const i32 = this.metronome.i32;
    const beat = Atomics.load(i32, MET_I32.CLICKED_BEAT);
    const atS = this.metronome.f64[MET_F64.CLICKED_AT]!;
    if (beat < 0 || Atomics.load(i32, MET_I32.CLICKED_BEAT) !== beat) return null;
    return { beat, atS };
  }

  /**
   * Whether the browser dates our output at the speaker (AudioContext.getOutputTimestamp). Then a
   * one-way delay without that dating is still being measured (our output's first seconds,
   * workers/speaker-time.ts `settled`), not one to guess from the reported latencies.
   */
  hasOutputClock(): boolean {
    return typeof this.context.getOutputTimestamp === 'function';
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
    for (const s of [this.stream, ...this.retiring]) for (const t of s.getTracks()) t.stop();
    await this.context.close();
  }
}
