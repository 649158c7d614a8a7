// Test signals of the mouth-to-ear rig (Node, pure): the click train (s16 stereo) and the sustained
// tone (s16 mono) at 48 kHz, and their WAV container for the sound server's sample cache. The unit
// tests build their synthetic recordings from the same signals.

export const RATE = 48_000;
export const CHANNELS = 2;

export interface ClickSpec {
  clicks: number;
  /** Seconds between clicks (the pairing assumes the same period). */
  periodS: number;
  /** Silence before the first click, s: the recorder is running by then. */
  firstS: number;
  /** Pulse width, ms, and level (fraction of full scale). */
  pulseMs: number;
  amplitude: number;
  /** Silence after the last click, s: room for its copy to arrive before playback ends. */
  tailS: number;
}

export const CLICKS: ClickSpec = { clicks: 12, periodS: 1, firstS: 0.5, pulseMs: 2, amplitude: 0.5, tailS: 0.7 };

/** A train of square pulses (both channels), the first at `firstS`. */
export function clickTrain(spec: ClickSpec, rate = RATE): Int16Array {
  const frames = Math.round((spec.firstS + (spec.clicks - 1) * spec.periodS + spec.tailS) * rate);
  const out = new Int16Array(frames * CHANNELS);
  const width = Math.round((spec.pulseMs * rate) / 1000);
  const level = Math.round(spec.amplitude * 32767);
  for (let k = 0; k < spec.clicks; k++) {
    const start = Math.round((spec.firstS + k * spec.periodS) * rate);
    for (let f = start; f < start + width && f < frames; f++) out.fill(level, f * CHANNELS, (f + 1) * CHANNELS);
  }
  return out;
}

/**
 * A mono sine with 20 ms fades, so the tone's own start and end carry no click and the glitch
 * detector only sees what the path did to it. Mono because the sound server's sample cache stores
 * float32 and holds at most 16 MB: 43 s of stereo, 87 s of mono (the server plays it on both channels).
 */
export function tone(seconds: number, hz: number, amplitude: number, rate = RATE): Int16Array {
  const frames = Math.round(seconds * rate);
  const fade = Math.round(0.02 * rate);
  const out = new Int16Array(frames);
  for (let f = 0; f < frames; f++) {
    const env = Math.min(1, f / fade, (frames - 1 - f) / fade);
    out[f] = Math.round(amplitude * env * 32767 * Math.sin((2 * Math.PI * hz * f) / rate));
  }
  return out;
}

/** RIFF/WAVE bytes of (interleaved) s16 PCM. */
export function wav(samples: Int16Array, channels = CHANNELS, rate = RATE): Uint8Array {
  const bytes = new Uint8Array(44 + samples.length * 2);
  const v = new DataView(bytes.buffer);
  const ascii = (at: number, s: string) => {
    for (let i = 0; i < s.length; i++) bytes[at + i] = s.charCodeAt(i);
  };
  ascii(0, 'RIFF');
  v.setUint32(4, 36 + samples.length * 2, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true); // PCM
  v.setUint16(22, channels, true);
  v.setUint32(24, rate, true);
  v.setUint32(28, rate * channels * 2, true);
  v.setUint16(32, channels * 2, true);
  v.setUint16(34, 16, true);
  ascii(36, 'data');
  v.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) v.setInt16(44 + i * 2, samples[i]!, true);
  return bytes;
}
