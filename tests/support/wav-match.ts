// Checks a received stream against the WAV its sender was fed as the microphone, sample for
// sample: the way to prove bit-exactness for a sender that has no tap (the production build).
// Chromium loops the file; where its fake capture device glitches the stream jumps to another
// point of the file, so every quantum is looked up on its own and continuity is counted apart.

import { readFileSync } from 'node:fs';
import { QUANTUM_FRAMES, QUANTUM_SAMPLES } from '../../src/shared/constants.ts';
import { seqDiff } from '../../src/shared/seq.ts';
import { floatToPcm16 } from '../../src/shared/wire.ts';

/**
 * The samples of a 16- or 24-bit stereo PCM WAV file (as wav.ts writes them: a 44-byte header),
 * interleaved, at 24-bit scale (a 16-bit sample s as s × 256), as the tap records decoded PCM.
 */
export function readWavPcm(path: string): Int32Array {
  return wavPcm(readFileSync(path), path);
}

export function wavPcm(buf: Buffer, name = 'WAV'): Int32Array {
  const bits = buf.readUInt16LE(34);
  if (buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 36, 40) !== 'data' || buf.readUInt16LE(22) !== 2 || (bits !== 16 && bits !== 24)) {
    throw new Error(`${name}: not a 16- or 24-bit stereo WAV with a plain 44-byte header`);
  }
  const bytes = bits / 8;
  const out = new Int32Array(buf.readUInt32LE(40) / bytes);
  for (let i = 0; i < out.length; i++) out[i] = bytes === 3 ? buf.readIntLE(44 + 3 * i, 3) : buf.readInt16LE(44 + 2 * i) * 256;
  return out;
}

/** Received quanta in arrival order: `pcm` holds QUANTUM_SAMPLES (stereo interleaved, 24-bit scale) per sequence. */
export interface PcmQuanta {
  seqs: readonly number[];
  pcm: ArrayLike<number>;
}

export interface WavMatch {
  /** Distinct sequences received. */
  quanta: number;
  /** Sequences missing between the first and the last received one. */
  gaps: number;
  /** Sequences received more than once. */
  repeats: number;
  /** All-zero quanta (the microphone before it starts, or a muted sender); not looked up. */
  silent: number;
  /** Non-silent quanta equal, sample for sample, to QUANTUM_FRAMES consecutive frames of the (looped) WAV. */
  verbatim: number;
  /**
   * Non-silent quanta equal, sample for sample, to the mono mixdown of QUANTUM_FRAMES consecutive
   * frames, on both channels: what a stereo sender sends a link its governor has stepped down to
   * the bottom of its ladder (workers/send-governor.ts; src/shared/wire.ts encodePacket).
   */
  mono: number;
  /** Verbatim or mono quanta that are the very frames after the previous sequence's (no glitch, no resampling between). */
  continued: number;
  /**
   * Non-silent quanta that are the (stereo) WAV verbatim in two parts split at frame 32, 64 or 96:
   * the microphone track lost a capture buffer inside the quantum. The network worker reads the
   * track in buffers of INPUT_BUFFER_FRAMES and cuts them into quanta (workers/track-capture.ts);
   * when it falls ~100 ms behind, the track processor drops its oldest buffer, and the frames after
   * the gap fill the quantum being cut. Buffer boundaries fall on those frames of a 128-frame
   * quantum (gcd(480, 128) = 32). The sender counts such a loss (StatsMessage.captureLostFrames,
   * whole buffers): a test holds each splice to it.
   */
  spliced: number;
  /** Up to 5 spliced quanta: sequence, split frame and the WAV frames of both parts (for the log). */
  splices: string[];
  /** Sequence, and first differing sample against the closest candidate, of up to 5 non-verbatim quanta (for the log). */
  misses: string[];
}

/**
 * Every received quantum, in sequence order, looked up in `wav` (interleaved stereo, looped).
 * A quantum matches only if all its QUANTUM_SAMPLES samples are equal: a resampled, re-gained or
 * re-quantised stream matches (almost) nowhere.
 */
export function matchWav(wav: Int32Array, received: PcmQuanta, opts: { mixFrom?: Int32Array } = {}): WavMatch {
  const frames = wav.length / 2;
  const at = (frame: number, k: number): number => wav[(2 * ((frame + (k >> 1)) % frames)) + (k & 1)]!;
  // The mixdown as the sender encodes it for the bottom rung: the float bus halved, as PCM16. The
  // bus is the sender's input: `mixFrom` when `wav` is not it (its 24-bit input rounded to 16 bits:
  // the mix of the rounded samples is not the rounded mix).
  const bus = opts.mixFrom ?? wav;
  if (bus.length !== wav.length) throw new Error('matchWav: mixFrom must be the same length as the WAV');
  const atMono = (frame: number, k: number): number => {
    const f = 2 * ((frame + (k >> 1)) % frames);
    return floatToPcm16((bus[f]! / 8_388_608 + bus[f + 1]! / 8_388_608) * 0.5) * 256;
  };
  // Index every start frame by its first four frames; candidates are then checked in full.
  const KEY_SAMPLES = 8;
  const keyOf = (get: (k: number) => number): string => {
    let s = '';
    for (let k = 0; k < KEY_SAMPLES; k++) s += `${get(k)},`;
    return s;
  };
  const indexOf = (get: (f: number, k: number) => number): Map<string, number[]> => {
    const index = new Map<string, number[]>();
    for (let f = 0; f < frames; f++) {
      const key = keyOf((k) => get(f, k));
      const list = index.get(key);
      if (list) list.push(f);
      else index.set(key, [f]);
    }
    return index;
  };
  const index = indexOf(at);
  let monoIndex: Map<string, number[]> | null = null; // built when a quantum is not found in stereo

  // Sequence order (wrap-safe), one entry per sequence.
  const bySeq = new Map<number, number>();
  let repeats = 0;
  received.seqs.forEach((s, i) => {
    if (bySeq.has(s)) repeats++;
    else bySeq.set(s, i);
  });
  const first = received.seqs[0] ?? 0;
  const order = [...bySeq.keys()].sort((a, b) => seqDiff(a, first) - seqDiff(b, first));
  const span = order.length ? seqDiff(order[order.length - 1]!, order[0]!) + 1 : 0;

  const r: WavMatch = { quanta: order.length, gaps: span - order.length, repeats, silent: 0, verbatim: 0, mono: 0, continued: 0, spliced: 0, splices: [], misses: [] };
  let prevSeq: number | null = null;
  let prevFrame: number | null = null;
  for (const seq of order) {
    const base = bySeq.get(seq)! * QUANTUM_SAMPLES;
    const sample = (k: number): number => received.pcm[base + k]!;
    let silent = true;
    for (let k = 0; k < QUANTUM_SAMPLES && silent; k++) if (sample(k) !== 0) silent = false;
    const follows = prevSeq !== null && seqDiff(seq, prevSeq) === 1;
    prevSeq = seq;
    if (silent) {
      r.silent++;
      prevFrame = null;
      continue;
    }
    const equalAt = (get: (f: number, k: number) => number) => (f: number): boolean => {
      for (let k = 0; k < QUANTUM_SAMPLES; k++) if (sample(k) !== get(f, k)) return false;
      return true;
    };
    // The frames after the previous quantum's first (a periodic tone matches at many offsets).
    const next: number | null = follows && prevFrame !== null ? (prevFrame + QUANTUM_FRAMES) % frames : null;
    const lookUp = (get: (f: number, k: number) => number, idx: Map<string, number[]>): number | null => {
      const equal = equalAt(get);
      if (next !== null && equal(next)) {
        r.continued++;
        return next;
      }
      return (idx.get(keyOf(sample)) ?? []).find(equal) ?? null;
    };
    let found = lookUp(at, index);
    if (found !== null) r.verbatim++;
    else {
      found = lookUp(atMono, (monoIndex ??= indexOf(atMono)));
      if (found !== null) r.mono++;
      else {
        const splice = findSplice(sample, at, index, keyOf, next);
        if (splice !== null) {
          r.spliced++;
          if (r.splices.length < 5) r.splices.push(`seq ${seq}: WAV ${splice.head} for frames 0–${splice.split - 1}, then WAV ${splice.tail}`);
          found = (splice.tail - splice.split + frames) % frames; // where the next quantum continues
        } else if (r.misses.length < 5) r.misses.push(describeMiss(seq, sample, at, next ?? (index.get(keyOf(sample)) ?? [])[0] ?? null));
      }
    }
    prevFrame = found;
  }
  return r;
}

/** Frames per buffer of the microphone track (10 ms at 48 kHz), as the network worker reads it. */
export const INPUT_BUFFER_FRAMES = 480;

/** Frames of a quantum at which a buffer boundary can fall: the multiples of gcd(INPUT_BUFFER_FRAMES, QUANTUM_FRAMES) inside it. */
const SPLICE_FRAMES: readonly number[] = (() => {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const step = gcd(INPUT_BUFFER_FRAMES, QUANTUM_FRAMES);
  return Array.from({ length: QUANTUM_FRAMES / step - 1 }, (_, i) => (i + 1) * step);
})();

/**
 * A quantum that is the stereo WAV in two verbatim parts, split at one of SPLICE_FRAMES: the head
 * at `next` (the frames after the previous quantum) or wherever its first frames are found, the
 * tail wherever its own first frames are found. Null if no split makes both parts verbatim.
 */
function findSplice(
  sample: (k: number) => number,
  at: (f: number, k: number) => number,
  index: Map<string, number[]>,
  keyOf: (get: (k: number) => number) => string,
  next: number | null,
): { split: number; head: number; tail: number } | null {
  const partAt = (from: number, to: number) => (f: number): boolean => {
    for (let k = 2 * from; k < 2 * to; k++) if (sample(k) !== at(f, k - 2 * from)) return false;
    return true;
  };
  for (const split of SPLICE_FRAMES) {
    const headOk = partAt(0, split);
    const head = next !== null && headOk(next) ? next : ((index.get(keyOf(sample)) ?? []).find(headOk) ?? null);
    if (head === null) continue;
    const tailOk = partAt(split, QUANTUM_FRAMES);
    const tail = (index.get(keyOf((k) => sample(2 * split + k))) ?? []).find(tailOk) ?? null;
    if (tail !== null) return { split, head, tail };
  }
  return null;
}

function describeMiss(seq: number, sample: (k: number) => number, at: (f: number, k: number) => number, frame: number | null): string {
  if (frame === null) return `seq ${seq}: no WAV frame starts like it (first samples ${[0, 1, 2, 3].map(sample).join(', ')})`;
  for (let k = 0; k < QUANTUM_SAMPLES; k++) if (sample(k) !== at(frame, k)) return `seq ${seq}: sample ${k} is ${sample(k)}, WAV frame ${frame} has ${at(frame, k)}`;
  return `seq ${seq}: equal at ${frame}`;
}

export interface RecordingMatch {
  /** Stereo frames in the recording. */
  frames: number;
  /** All-zero frames before the first sound (the input before the microphone delivered). */
  leadingSilence: number;
  /** Frames after that equal, both samples, to the frame of the (looped) WAV they continue. */
  verbatim: number;
  /** Places where the recording does not continue the WAV from the frame before (the first sound counts as one). */
  jumps: number;
  /** Up to 5 jumps: the recording's frame, the WAV frame it continued from and the one it jumped to (for the log). */
  jumpsAt: string[];
  /** Up to 5 frames that are found nowhere in the WAV (for the log). */
  misses: string[];
}

/**
 * A recording (interleaved stereo, 24-bit scale) against the WAV it was fed: after its leading
 * silence, frame by frame, each must be the WAV's next frame; where one is not, it is looked up
 * anew (a jump: the input glitched or lost frames). A resampled or re-quantised recording is
 * verbatim almost nowhere.
 */
export function matchRecording(wav: Int32Array, rec: Int32Array): RecordingMatch {
  const frames = wav.length / 2;
  const n = rec.length / 2;
  let lead = 0;
  while (lead < n && rec[2 * lead] === 0 && rec[2 * lead + 1] === 0) lead++;
  // Index WAV frames by their first 4 frames (8 samples) to find where a run starts.
  const key = (a: ArrayLike<number>, f: number, len: number): string => {
    let s = '';
    for (let k = 0; k < 8; k++) s += `${a[(2 * f + k) % len]},`;
    return s;
  };
  const index = new Map<string, number>();
  for (let f = frames - 1; f >= 0; f--) index.set(key(wav, f, wav.length), f);
  const r: RecordingMatch = { frames: n, leadingSilence: lead, verbatim: 0, jumps: 0, jumpsAt: [], misses: [] };
  let at: number | null = null;
  for (let f = lead; f < n; f++) {
    const equal = (w: number): boolean => rec[2 * f] === wav[2 * w] && rec[2 * f + 1] === wav[2 * w + 1];
    if (at !== null && equal(at)) {
      r.verbatim++;
      at = (at + 1) % frames;
      continue;
    }
    const found = f + 4 <= n ? index.get(key(rec, f, rec.length)) : undefined;
    if (found !== undefined && equal(found)) {
      r.jumps++;
      if (r.jumpsAt.length < 5) r.jumpsAt.push(`frame ${f}: WAV ${at ?? '–'} → ${found}`);
      r.verbatim++;
      at = (found + 1) % frames;
    } else {
      if (r.misses.length < 5) r.misses.push(`frame ${f}: ${rec[2 * f]}, ${rec[2 * f + 1]}${at !== null ? ` (the WAV continues ${wav[2 * at]}, ${wav[2 * at + 1]})` : ''}`);
      at = null;
    }
  }
  return r;
}

/** The samples of a 24-bit stereo WAV as the recorder writes it (44-byte header), interleaved. */
export function recordingPcm(buf: Buffer): { sampleRate: number; dataBytes: number; samples: Int32Array } {
  if (buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE' || buf.toString('ascii', 36, 40) !== 'data') throw new Error('not a plain WAV');
  if (buf.readUInt16LE(22) !== 2 || buf.readUInt16LE(34) !== 24) throw new Error(`not 24-bit stereo: ${buf.readUInt16LE(22)} ch, ${buf.readUInt16LE(34)} bits`);
  const dataBytes = buf.readUInt32LE(40);
  if (buf.readUInt32LE(4) !== 36 + dataBytes || 44 + dataBytes !== buf.length) throw new Error(`header sizes (RIFF ${buf.readUInt32LE(4)}, data ${dataBytes}) do not match the file's ${buf.length} bytes`);
  const samples = new Int32Array(dataBytes / 3);
  for (let i = 0; i < samples.length; i++) samples[i] = buf.readIntLE(44 + 3 * i, 3);
  return { sampleRate: buf.readUInt32LE(24), dataBytes, samples };
}
