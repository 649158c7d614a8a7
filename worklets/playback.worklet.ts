// Playback AudioWorkletProcessor (audio rendering thread): renders the mix of every remote
// peer from the de-jitter rings in shared memory. No allocation in process(); the port carries
// only the start of a take (the heard ring to fill), handled outside process().

import { HeardViews, PlaybackViews } from '../src/shared/memory-layout.ts';
import { PLAYBACK_PROCESSOR, type PlaybackProcessorOptions, type ToPlaybackWorklet } from '../src/shared/worklet-options.ts';
import { Mixer } from './mixer.ts';

class PlaybackProcessor extends AudioWorkletProcessor {
  private readonly mixer: Mixer;

  constructor(options: AudioWorkletNodeOptions) {
    super(options);
    this.mixer = new Mixer(new PlaybackViews((options.processorOptions as PlaybackProcessorOptions).playback));
    this.port.onmessage = (ev) => {
      const msg = ev.data as ToPlaybackWorklet;
      if (msg.type === 'record-heard') this.mixer.heard.attach(msg.heard ? new HeardViews(msg.heard) : null);
    };
  }

  override process(_inputs: Float32Array[][], outputs: Float32Array[][]): boolean {
    const out = outputs[0];
    const l = out?.[0];
    if (!l) return true;
    this.mixer.startsAt(currentFrame);
    this.mixer.render(l, out[1] ?? l);
    return true;
  }
}

registerProcessor(PLAYBACK_PROCESSOR, PlaybackProcessor);
