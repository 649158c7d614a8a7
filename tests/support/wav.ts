// Test signals: 48 kHz 16-bit (or 24-bit) PCM WAV files with a distinct tone per peer and a marker
// impulse every second, written for Chromium's --use-file-for-fake-audio-capture.

import { writeFileSync } from 'node:fs';

export interface ToneSpec {
  /** Left and right tone frequencies in Hz. */
  leftHz: number;
  rightHz: number;
  seconds: number;
  amplitude?: number;
  /** Sample width, 16 (the default) or 24: a 24-bit file's low 8 bits carry signal, so a 16-bit path changes them. */
  bits?: 16 | 24;
  /**
   * Amplitude of seeded white noise added to both channels (default 0). With it no stretch of the
   * file repeats, so a position found in it is the only one (the tones alone repeat every 50 ms).
   */
  noise?: number;
  /** The 1 ms marker impulse every second (default true); off for a file that must stay silent. */
  marker?: boolean;
}

export function toneWav(spec: ToneSpec, sampleRate = 48_000): Buffer {
  const frames = Math.round(spec.seconds * sampleRate);
  const amp = spec.amplitude ?? 0.4;
  const bytes = (spec.bits ?? 16) / 8;
  const full = bytes === 3 ? 8_388_607 : 32767;
  const data = Buffer.alloc(frames * 2 * bytes);
  const put = (x: number, at: number): void => {
    const s = Math.max(-full - 1, Math.min(full, Math.round(x * full)));
    if (bytes === 3) data.writeIntLE(s, at, 3);
    else data.writeInt16LE(s, at);
  };
  let seed = 0x2545f491;
  const noise = (): number => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return (spec.noise ?? 0) * (seed / 2 ** 31 - 1);
  };
  for (let i = 0; i < frames; i++) {
    const marker = spec.marker !== false && i % sampleRate < 48 ? 0.45 : 0; // 1 ms impulse train once per second
    put(amp * Math.sin((2 * Math.PI * spec.leftHz * i) / sampleRate) + marker + noise(), i * 2 * bytes);
    put(amp * Math.sin((2 * Math.PI * spec.rightHz * i) / sampleRate) + marker + noise(), i * 2 * bytes + bytes);
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(2, 22); // channels
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2 * bytes, 28);
  header.writeUInt16LE(2 * bytes, 32);
  header.writeUInt16LE(8 * bytes, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

export function writeToneWav(path: string, spec: ToneSpec): string {
  writeFileSync(path, toneWav(spec));
  return path;
}

/** Block length of tonePower: 100 ms, a whole number of cycles of the test tones (440, 1000 Hz). */
const TONE_BLOCK = 4800;

/**
 * Power of `x` at `hz`: the median over 100 ms blocks of each block's Goertzel power, normalised by
 * its length (a 0.4-amplitude sine gives 0.04). Per block, not over the whole signal: a glitch of
 * the fake capture device (a few samples lost or repeated) shifts the tone's phase, and one sum
 * over a second that spans such a shift cancels itself (a clean-clone run read 0.007 for a
 * 0.4-amplitude 440 Hz tone). The median also leaves out the blocks a glitch falls in.
 */
export function tonePower(x: ArrayLike<number>, hz: number, sampleRate = 48_000): number {
  const k = 2 * Math.cos((2 * Math.PI * hz) / sampleRate);
  const block = Math.min(TONE_BLOCK, x.length);
  const powers: number[] = [];
  for (let start = 0; start + block <= x.length; start += block) {
    let s1 = 0;
    let s2 = 0;
    for (let i = start; i < start + block; i++) {
      const s0 = x[i]! + k * s1 - s2;
      s2 = s1;
      s1 = s0;
    }
    powers.push((s1 * s1 + s2 * s2 - k * s1 * s2) / (block * block));
  }
  powers.sort((a, b) => a - b);
  return powers.length === 0 ? 0 : powers[powers.length >> 1]!;
}

/** Dominant frequency of a signal by counting upward zero crossings (fine for a clean tone). */
export function zeroCrossingHz(x: ArrayLike<number>, sampleRate = 48_000): number {
  let crossings = 0;
  for (let i = 1; i < x.length; i++) if (x[i - 1]! < 0 && x[i]! >= 0) crossings++;
  return (crossings * sampleRate) / x.length;
}
