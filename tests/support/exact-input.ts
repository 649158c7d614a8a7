// A microphone input known sample for sample, for proving what a page without a tap (the
// production build) sends. Chromium's fake capture device (--use-file-for-fake-audio-capture) is
// not bit-exact: measured (Chromium 156), the received samples follow the WAV's within a few LSB,
// as through a resampler with a fraction of a sample of delay, and not one of 2250 quanta equals
// the file. Instead, this init script makes the page's `createMediaStreamSource` (the entry of
// Tutti's audio graph, after getUserMedia, which still opens the fake device) return a looping
// AudioBufferSourceNode of the WAV's samples (int16 / 32768, exact in float32, at the context's
// own rate: played unresampled). Everything after it (input gain, capture worklet, ring, network
// worker, encoder, DataChannel) is the page's own code, whichever build it is.

import { readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';

/** Call before the page loads (an init script); `wavPath` as wav.ts writes them (16-bit stereo, 48 kHz). */
export async function feedExactInput(page: Page, wavPath: string): Promise<void> {
  const wav = readFileSync(wavPath);
  if (wav.toString('ascii', 36, 40) !== 'data' || wav.readUInt16LE(22) !== 2 || wav.readUInt16LE(34) !== 16) throw new Error(`${wavPath}: not a plain 16-bit stereo WAV`);
  await page.addInitScript(
    ({ b64, sampleRate }) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const view = new DataView(bytes.buffer);
      const frames = (bytes.length - 44) / 4;
      // Runs in the page before its scripts: replace the graph's entry, keep everything else.
      AudioContext.prototype.createMediaStreamSource = function (this: AudioContext): MediaStreamAudioSourceNode {
        if (this.sampleRate !== sampleRate) throw new Error(`exact input: the context runs at ${this.sampleRate} Hz, the WAV at ${sampleRate}`);
        const buffer = new AudioBuffer({ numberOfChannels: 2, length: frames, sampleRate });
        const l = buffer.getChannelData(0);
        const r = buffer.getChannelData(1);
        for (let i = 0; i < frames; i++) {
          l[i] = view.getInt16(44 + 4 * i, true) / 32768;
          r[i] = view.getInt16(46 + 4 * i, true) / 32768;
        }
        const source = new AudioBufferSourceNode(this, { buffer, loop: true });
        source.start();
        // The engine only connects (and later disconnects) it, which every AudioNode can.
        return source as unknown as MediaStreamAudioSourceNode;
      };
    },
    { b64: wav.toString('base64'), sampleRate: wav.readUInt32LE(24) },
  );
}
