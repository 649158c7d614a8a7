// A microphone known sample for sample, for proving what a page without a tap (the production
// build) sends. Chromium's fake capture device (--use-file-for-fake-audio-capture) is not
// bit-exact: measured (Chromium 156), the received samples follow the WAV's within a few LSB, as
// through a resampler with a fraction of a sample of delay, and not one of 2250 quanta equals the
// file. Instead, this init script replaces only the device: the page's getUserMedia for audio
// returns the track of a MediaStreamAudioDestinationNode fed by a looping AudioBufferSourceNode of
// the WAV's samples (int16 / 32768 or int24 / 2^23, exact in float32) in a context at the WAV's rate, so nothing
// resamples it. Everything from the track on (however the page reads it, input gain, network
// worker, encoder, DataChannel) is the page's own code, whichever build it is; measured, its
// stream arrives verbatim.

import { readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';

/**
 * Call before the page loads (an init script); `wavPath` as wav.ts writes them (16- or 24-bit
 * stereo). A 24-bit sample s becomes s / 2^23, also exact in float32.
 */
export async function feedExactInput(page: Page, wavPath: string): Promise<void> {
  const wav = readFileSync(wavPath);
  const bits = wav.readUInt16LE(34);
  if (wav.toString('ascii', 36, 40) !== 'data' || wav.readUInt16LE(22) !== 2 || (bits !== 16 && bits !== 24)) throw new Error(`${wavPath}: not a plain 16- or 24-bit stereo WAV`);
  await page.addInitScript(
    ({ b64, sampleRate, bytesPerSample }) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const view = new DataView(bytes.buffer);
      const frames = (bytes.length - 44) / (2 * bytesPerSample);
      const sample = (i: number): number =>
        bytesPerSample === 3 ? ((view.getInt8(44 + 3 * i + 2) << 16) | view.getUint16(44 + 3 * i, true)) / 8_388_608 : view.getInt16(44 + 2 * i, true) / 32768;
      const devices = navigator.mediaDevices;
      const deviceMedia = devices.getUserMedia.bind(devices);
      let source: AudioBufferSourceNode | null = null;
      devices.getUserMedia = async (constraints?: MediaStreamConstraints): Promise<MediaStream> => {
        if (!constraints?.audio || constraints.video) return deviceMedia(constraints);
        // One running source for the page's life, as a real microphone keeps running: a second
        // call (the page reopening the microphone, e.g. on a device change) gets a new track of
        // the same source, so the input continues where it was instead of starting the file over.
        // The browsers run with --autoplay-policy=no-user-gesture-required, so it starts running.
        if (!source) {
          const context = new AudioContext({ sampleRate });
          const buffer = new AudioBuffer({ numberOfChannels: 2, length: frames, sampleRate });
          const l = buffer.getChannelData(0);
          const r = buffer.getChannelData(1);
          for (let i = 0; i < frames; i++) {
            l[i] = sample(2 * i);
            r[i] = sample(2 * i + 1);
          }
          source = new AudioBufferSourceNode(context, { buffer, loop: true });
          source.start();
        }
        const destination = new MediaStreamAudioDestinationNode(source.context as AudioContext, { channelCount: 2, channelCountMode: 'explicit' });
        source.connect(destination);
        return destination.stream;
      };
    },
    { b64: wav.toString('base64'), sampleRate: wav.readUInt32LE(24), bytesPerSample: bits / 8 },
  );
}
