// Playback AudioWorkletProcessor (audio rendering thread): renders the mix of every remote
// peer from the de-jitter rings in shared memory, then the metronome's click. No allocation in
// process(); the port carries only the start of a take (the heard ring to fill), handled outside
// process(), and in the test build the output tap's onsets.

import { HeardViews, MetronomeViews, PlaybackViews } from '../src/shared/memory-layout.ts';
import { PLAYBACK_PROCESSOR, type FromPlaybackWorklet, type PlaybackProcessorOptions, type ToPlaybackWorklet } from '../src/shared/worklet-options.ts';
import { ClickTrack } from './click-track.ts';
import { Mixer } from './mixer.ts';
import { OnsetTap } from './test-onset-tap.ts';

class PlaybackProcessor extends AudioWorkletProcessor {
  private readonly mixer: Mixer;
  private readonly click: ClickTrack;
  /** Test build with the tap on: the onsets of the output. */
  private readonly onsets: OnsetTap | null = null;

  constructor(options: AudioWorkletNodeOptions) {
    super(options);
    const opts = options.processorOptions as PlaybackProcessorOptions;
    this.mixer = new Mixer(new PlaybackViews(opts.playback));
    this.click = new ClickTrack(new MetronomeViews(opts.metronome), sampleRate);
    if (__TUTTI_TEST__ && opts.tap) this.onsets = new OnsetTap((frame, peak) => this.port.postMessage({ type: 'onset', frame, peak } satisfies FromPlaybackWorklet));
    this.port.onmessage = (ev) => {
      const msg = ev.data as ToPlaybackWorklet;
      if (msg.type === 'record-heard') this.mixer.heard.attach(msg.heard ? new HeardViews(msg.heard) : null);
    };
  }

  override process(_inputs: Float32Array[][], outputs: Float32Array[][]): boolean {
    const out = outputs[0];
    const l = out?.[0];
    if (!l) return true;
    const r = out[1] ?? l;
    this.mixer.startsAt(currentFrame);
    this.mixer.render(l, r);
    this.click.render(l, r, currentFrame);
    if (__TUTTI_TEST__ && this.onsets) this.onsets.scan(l, currentFrame);
    return true;
  }
}

registerProcessor(PLAYBACK_PROCESSOR, PlaybackProcessor);
