// The WAV comparison that proves a production sender bit-exact (tests/support/wav-match.ts) must
// see each test switch if it acted: a dropped frame, a resampled stream, one LSB off, a splice.
// Streams are made here as the network worker would send them (float quanta → floatToPcm16, recorded at 24-bit scale as the tap does).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QUANTUM_FRAMES, QUANTUM_SAMPLES } from '../../src/shared/constants.ts';
import { floatToPcm16, floatToPcm24 } from '../../src/shared/wire.ts';
import { TestClockSkew } from '../../workers/test-clock-skew.ts';
import { matchWav, wavPcm, type PcmQuanta } from '../support/wav-match.ts';
import { toneWav } from '../support/wav.ts';

const wav = wavPcm(toneWav({ leftHz: 440, rightHz: 660, seconds: 5 }));
const FRAMES = wav.length / 2;
/** Sequences start just before the 2^32 wrap: the comparison must order across it. */
const FIRST_SEQ = 2 ** 32 - 40;
const N = 400;

/** `n` float quanta of the looped WAV from frame `start`, as the capture worklet delivers them. */
function captured(start: number, n: number): Float32Array[] {
  return Array.from({ length: n }, (_, q) => {
    const f = new Float32Array(QUANTUM_SAMPLES);
    for (let k = 0; k < QUANTUM_SAMPLES; k++) f[k] = wav[2 * ((start + q * QUANTUM_FRAMES + (k >> 1)) % FRAMES) + (k & 1)]! / 8_388_608;
    return f;
  });
}

/** Quanta as the tap records them (PCM16), one sequence each, skipping `drop(i)`. */
function received(quanta: Float32Array[], drop: (i: number) => boolean = () => false): PcmQuanta {
  const seqs: number[] = [];
  const pcm: number[] = [];
  quanta.forEach((q, i) => {
    if (drop(i)) return;
    seqs.push((FIRST_SEQ + i) >>> 0);
    for (const x of q) pcm.push(floatToPcm16(x) * 256);
  });
  return { seqs, pcm };
}

describe('matchWav (bit-exactness against the sender\'s input)', () => {
  it('an exact stream matches every quantum, in sequence across the 2^32 wrap, continuing the input', () => {
    const m = matchWav(wav, received(captured(1000, N)));
    assert.equal(m.quanta, N);
    assert.equal(m.gaps, 0);
    assert.equal(m.verbatim, N);
    // The first quantum has no predecessor; a periodic tone may also place it at an alias offset.
    assert.ok(m.continued >= N - 2, `continued ${m.continued}`);
  });

  it('a stretch the sender mixed down to mono (its governor on a congested link) is mono, not verbatim, and continues', () => {
    const quanta = captured(3000, 60).map((q, i) => {
      if (i < 20 || i >= 40) return q;
      // As encodePacket mixes a stereo bus down, and the receiver plays one channel on both.
      const m = new Float32Array(QUANTUM_SAMPLES);
      for (let f = 0; f < QUANTUM_FRAMES; f++) m[2 * f] = m[2 * f + 1] = floatToPcm16((q[2 * f]! + q[2 * f + 1]!) * 0.5) / 32768;
      return m;
    });
    const m = matchWav(wav, received(quanta));
    assert.equal(m.verbatim, 40);
    assert.equal(m.mono, 20);
    assert.ok(m.continued >= 58, `continued ${m.continued}`);
    assert.deepEqual(m.misses, []);
    // A mono stream that is not the mixdown (the left channel on both) matches nowhere.
    const left = captured(3000, 10).map((q) => q.map((_, k) => q[k & ~1]!));
    assert.equal(matchWav(wav, received(left)).mono, 0);
  });

  it('a 24-bit input heard at 16 bits: its mono mixdown is found with the input as the bus (mixFrom), not from the rounded samples', () => {
    // A 24-bit input whose low 8 bits carry signal, and what a 16-bit receiver hears of it.
    const src24 = wav.map((x, i) => Math.max(-8_388_608, Math.min(8_388_607, x + ((i * 37) % 256) - 128)));
    const in16 = src24.map((x) => floatToPcm16(x / 8_388_608) * 256);
    const quanta = Array.from({ length: 40 }, (_, q) => {
      const f = new Float32Array(QUANTUM_SAMPLES);
      for (let k = 0; k < QUANTUM_SAMPLES; k++) f[k] = src24[2 * (500 + q * QUANTUM_FRAMES + (k >> 1)) + (k & 1)]! / 8_388_608;
      if (q < 20) return f;
      const m = new Float32Array(QUANTUM_SAMPLES);
      for (let n = 0; n < QUANTUM_FRAMES; n++) m[2 * n] = m[2 * n + 1] = floatToPcm16((f[2 * n]! + f[2 * n + 1]!) * 0.5) / 32768;
      return m;
    });
    const plain = matchWav(in16, received(quanta));
    assert.equal(plain.verbatim, 20);
    assert.ok(plain.mono < 20, `the mix of the rounded samples is not the rounded mix: ${plain.mono} of 20 found anyway`);
    const m = matchWav(in16, received(quanta), { mixFrom: src24 });
    assert.equal(m.verbatim, 20);
    assert.equal(m.mono, 20);
    assert.deepEqual(m.misses, []);
  });

  it('the loop point of the file is continuous too', () => {
    const m = matchWav(wav, received(captured(FRAMES - 10 * QUANTUM_FRAMES - 17, 40)));
    assert.equal(m.verbatim, 40);
    assert.ok(m.continued >= 38);
  });

  it('dropEvery=2: half the sequences are gaps', () => {
    const m = matchWav(wav, received(captured(0, N), (i) => (FIRST_SEQ + i) % 2 === 0));
    assert.equal(m.quanta, N / 2);
    assert.ok(m.gaps >= N / 2 - 1, `gaps ${m.gaps}`);
  });

  it('captureRatio=1.01 (and 1.001): resampled quanta match nowhere', () => {
    for (const ratio of [1.01, 1.001]) {
      const r = new TestClockSkew(ratio);
      const out: Float32Array[] = [];
      for (const q of captured(0, N)) {
        r.push(q, 0);
        const f = new Float32Array(QUANTUM_SAMPLES);
        while (r.pull(f) !== null) out.push(f.slice());
      }
      const m = matchWav(wav, received(out));
      assert.ok(m.verbatim <= out.length * 0.02, `ratio ${ratio}: ${m.verbatim} of ${out.length} verbatim`);
    }
  });

  it('one sample one LSB off, or a gain of 1.0001, is not verbatim', () => {
    const q = captured(5000, 3);
    q[1]![77] = q[1]![77]! + 1 / 32768;
    assert.equal(matchWav(wav, received(q)).verbatim, 2);
    const gained = captured(5000, 20).map((f) => f.map((x) => x * 1.0001));
    assert.ok(matchWav(wav, received(gained)).verbatim <= 2);
  });

  it('an input that skips a 10 ms chunk inside a quantum (at frame 32, 64 or 96) is spliced, not a miss; a cut elsewhere is a miss', () => {
    // The input (at 48 kHz, in 480-frame chunks) loses one chunk, at frame `split` of quantum 30.
    const spliced = (split: number): Float32Array[] => {
      const start = 7000;
      const before = captured(start, 30);
      const at = start + 30 * QUANTUM_FRAMES;
      const head = captured(at, 1)[0]!;
      const tail = captured(at + 480, 1)[0]!; // the frames that follow the lost chunk
      const q = new Float32Array(QUANTUM_SAMPLES);
      for (let k = 0; k < QUANTUM_SAMPLES; k++) q[k] = k < 2 * split ? head[k]! : tail[k]!;
      return [...before, q, ...captured(at + QUANTUM_FRAMES + 480, 30)];
    };
    for (const split of [32, 64, 96]) {
      const m = matchWav(wav, received(spliced(split)));
      assert.equal(m.spliced, 1, `split at ${split}: ${m.misses.join('; ')}`);
      assert.equal(m.verbatim, 60);
      assert.deepEqual(m.misses, []);
      // The quantum after the splice continues the tail (a periodic tone may alias the first one).
      assert.ok(m.continued >= 57, `split at ${split}: continued ${m.continued}`);
      assert.match(m.splices[0]!, new RegExp(`frames 0–${split - 1}, then`));
    }
    for (const split of [16, 50, 100]) {
      const m = matchWav(wav, received(spliced(split)));
      assert.equal(m.spliced, 0, `a cut at frame ${split} is no 10 ms chunk's boundary`);
      assert.equal(m.misses.length, 1);
    }
    // Both parts must be the input verbatim: one LSB off in the tail is a miss.
    const off = spliced(64);
    off[30]![2 * 100] = off[30]![2 * 100]! + 1 / 32768;
    const m = matchWav(wav, received(off));
    assert.equal(m.spliced, 0);
    assert.equal(m.misses.length, 1);
  });

  it('a splice (the input jumps) is still verbatim but not continued; silence is counted apart', () => {
    const q = [...captured(3000, 10), new Float32Array(QUANTUM_SAMPLES), ...captured(100_000 + 33, 10)];
    const m = matchWav(wav, received(q));
    assert.equal(m.silent, 1);
    assert.equal(m.verbatim, 20);
    assert.ok(m.continued <= 18);
  });

  it('repeated sequences are counted', () => {
    const r = received(captured(0, 5));
    const m = matchWav(wav, { seqs: [...r.seqs, r.seqs[2]!], pcm: [...Array.from(r.pcm), ...Array.from(r.pcm).slice(2 * QUANTUM_SAMPLES, 3 * QUANTUM_SAMPLES)] });
    assert.equal(m.repeats, 1);
    assert.equal(m.quanta, 5);
  });
});

describe('matchWav with a 24-bit WAV (the PCM24 path)', () => {
  const wav24 = wavPcm(toneWav({ leftHz: 440, rightHz: 660, seconds: 2, bits: 24 }));
  const frames24 = wav24.length / 2;
  const quanta = (n: number, quantise: (x: number) => number): PcmQuanta => {
    const seqs: number[] = [];
    const pcm: number[] = [];
    for (let q = 0; q < n; q++) {
      seqs.push(q);
      for (let k = 0; k < QUANTUM_SAMPLES; k++) pcm.push(quantise(wav24[2 * ((700 + q * QUANTUM_FRAMES + (k >> 1)) % frames24) + (k & 1)]! / 8_388_608));
    }
    return { seqs, pcm };
  };

  it('has signal below 16 bits, arrives verbatim through PCM24, and not through PCM16', () => {
    assert.ok(wav24.some((s) => s % 256 !== 0), 'the low 8 bits carry signal');
    const m24 = matchWav(wav24, quanta(50, floatToPcm24));
    assert.equal(m24.verbatim, 50);
    assert.equal(m24.continued, 49);
    const m16 = matchWav(wav24, quanta(50, (x) => floatToPcm16(x) * 256));
    assert.ok(m16.verbatim <= 1, `${m16.verbatim} verbatim through PCM16`);
  });
});
