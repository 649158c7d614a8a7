// The heard tracks of a take, end to end below the browser: the playback worklet's writer
// (worklets/heard-writer.ts) pushes records into a real heard ring (ringbuf.js over a
// SharedArrayBuffer), and the recorder's HeardTracks (workers/heard-tracks.ts) writes them into
// in-memory files. Properties: every track and the mix share one timeline, placed on the input's
// by the speaker timestamp (to the frame, either side of zero); a participant away for a while
// keeps one track with silence in the gap; the same track twice in one record is summed; a record
// the ring lost is silence and a gap; the sidecar's presence and concealment spans say where.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { QUANTUM_FRAMES, SAMPLE_RATE } from '../../src/shared/constants.ts';
import { HEARD_F64, HEARD_I32, HeardFlag, HeardViews, createHeardMemory } from '../../src/shared/memory-layout.ts';
import type { TakeInfo } from '../../src/shared/recorder-protocol.ts';
import { floatToPcm24 } from '../../src/shared/wire.ts';
import { ALIGN_WAIT_MS, HeardTracks } from '../../workers/heard-tracks.ts';
import { WAV_HEADER_BYTES } from '../../workers/wav-writer.ts';
import { HeardWriter } from '../../worklets/heard-writer.ts';
import { FakeFile } from './fake-sync-file.ts';

/** A peer's sample at quantum q, frame f: distinct per track, quantum, frame and channel. */
const sample = (track: number, q: number, f: number, ch: number): number => (ch ? -1 : 1) * (track * 0.1 + q * 0.001 + f * 0.000001);

interface Peer {
  track: number;
  flags?: number;
}

function take(): TakeInfo {
  return { id: 't', title: 't', startedAt: '', sampleRate: SAMPLE_RATE, bitsPerSample: 24, channels: 2, tracks: [{ name: 'input', file: 'input.wav', bytes: 0, frames: 0, kind: 'input' }], gaps: [], state: 'recording' };
}

/** A take's heard side: the writer (audio thread) and HeardTracks (recorder) over one ring. */
async function rig(opts: { offsetFrames: number | null }) {
  const mem = createHeardMemory();
  const writerViews = new HeardViews(mem);
  const writer = new HeardWriter();
  writer.attach(writerViews);
  Atomics.store(writerViews.i32, HEARD_I32.ON, 1);
  const files = new Map<string, FakeFile>();
  const info = take();
  let saves = 0;
  const inputStart = 1_000_000;
  const heard = new HeardTracks(new HeardViews(mem), info, {
    open: async (file) => {
      const f = new FakeFile();
      files.set(file, f);
      return f;
    },
    save: async () => void saves++,
  }, new Map([[1, 'Bob']]), () => inputStart);
  await heard.open();
  const l = new Float64Array(QUANTUM_FRAMES);
  const r = new Float64Array(QUANTUM_FRAMES);
  const mixL = new Float32Array(QUANTUM_FRAMES);
  const mixR = new Float32Array(QUANTUM_FRAMES);
  /** One render quantum `q` with these peers (the mix: their sum). */
  const render = (q: number, peers: Peer[]): void => {
    if (!writer.begin(q, 5000 + q * QUANTUM_FRAMES)) throw new Error('writer off');
    if (q === 0 && opts.offsetFrames !== null) {
      // The network worker dates the first render at the speaker.
      assert.equal(Atomics.load(writerViews.i32, HEARD_I32.FIRST_FRAME), 5000);
      writerViews.f64[HEARD_F64.FIRST_SPEAKER_MS] = inputStart + (opts.offsetFrames * 1000) / SAMPLE_RATE;
      Atomics.store(writerViews.i32, HEARD_I32.SPEAKER_KNOWN, 1);
    }
    mixL.fill(0);
    mixR.fill(0);
    for (const p of peers) {
      for (let f = 0; f < QUANTUM_FRAMES; f++) {
        l[f] = sample(p.track, q, f, 0);
        r[f] = sample(p.track, q, f, 1);
        mixL[f]! += l[f]!;
        mixR[f]! += r[f]!;
      }
      writer.addPeer(p.track, p.flags ?? 0, l, r);
    }
    writer.finish(mixL, mixR);
  };
  /** Drain until everything is written (new tracks open asynchronously). */
  const drain = async (now = 0): Promise<void> => {
    for (let i = 0; i < 20; i++) {
      heard.drain(now);
      await heard.settle();
    }
    if (heard.failure) throw heard.failure;
  };
  /** Frame `at` of a track's file, both samples. */
  const frameOf = (file: string, at: number): [number, number] => {
    const b = files.get(file)!.content();
    const o = WAV_HEADER_BYTES + at * 6;
    const s24 = (k: number): number => ((b[k]! | (b[k + 1]! << 8) | (b[k + 2]! << 16)) << 8) >> 8;
    return [s24(o), s24(o + 3)];
  };
  const frames = (file: string): number => (files.get(file)!.content().length - WAV_HEADER_BYTES) / 6;
  return { heard, info, files, render, drain, frameOf, frames, saves: () => saves };
}

/** As the recorder writes it: the record carries Float32. */
const pcm = (x: number): number => floatToPcm24(Math.fround(x));

describe('heard tracks', () => {
  test('aligned on the input by the speaker time; a participant away keeps one track, silent in the gap; a lost record is a gap', async () => {
    const OFFSET = 100;
    const g = await rig({ offsetFrames: OFFSET });
    for (let q = 0; q < 20; q++) {
      if (q === 17) continue; // the ring had no room: the record never arrived
      const peers: Peer[] = [];
      if (q < 10 || q >= 15) peers.push({ track: 1, ...(q === 3 ? { flags: HeardFlag.CONCEALED } : {}) });
      if (q >= 5) peers.push({ track: 2 });
      g.render(q, peers);
    }
    await g.drain();
    const end = OFFSET + 20 * QUANTUM_FRAMES + 50;
    g.heard.close(end);

    assert.deepEqual(g.info.alignment, { inputStartMs: 1_000_000, heardStartMs: 1_000_000 + (OFFSET * 1000) / SAMPLE_RATE, heardOffsetFrames: OFFSET, by: 'speaker' });
    assert.deepEqual(g.info.tracks.map((t) => [t.kind, t.file, t.name]), [['input', 'input.wav', 'input'], ['mix', 'mix.wav', 'mix'], ['heard', 'heard-1.wav', 'Bob'], ['heard', 'heard-2.wav', 'participant 2']]);
    for (const file of ['mix.wav', 'heard-1.wav', 'heard-2.wav']) assert.equal(g.frames(file), end, `${file}: every track as long as the take`);
    for (const t of g.info.tracks.slice(1)) assert.equal(t.frames, end);

    // Before the first heard frame: silence; then quantum q at OFFSET + 128 q, to the frame.
    assert.deepEqual(g.frameOf('heard-1.wav', OFFSET - 1), [0, 0]);
    assert.deepEqual(g.frameOf('heard-1.wav', OFFSET), [pcm(sample(1, 0, 0, 0)), pcm(sample(1, 0, 0, 1))]);
    assert.deepEqual(g.frameOf('heard-1.wav', OFFSET + 9 * 128 + 127), [pcm(sample(1, 9, 127, 0)), pcm(sample(1, 9, 127, 1))]);
    // Away for quanta 10–14: silence, then the same track again.
    assert.deepEqual(g.frameOf('heard-1.wav', OFFSET + 12 * 128), [0, 0]);
    assert.deepEqual(g.frameOf('heard-1.wav', OFFSET + 15 * 128 + 3), [pcm(sample(1, 15, 3, 0)), pcm(sample(1, 15, 3, 1))]);
    // Track 2 from quantum 5, on the same timeline; the mix is the sum, frame for frame.
    assert.deepEqual(g.frameOf('heard-2.wav', OFFSET + 5 * 128 - 1), [0, 0]);
    assert.deepEqual(g.frameOf('heard-2.wav', OFFSET + 5 * 128), [pcm(sample(2, 5, 0, 0)), pcm(sample(2, 5, 0, 1))]);
    const mixAt = (q: number, f: number, ch: number): number => pcm(Math.fround(Math.fround(sample(1, q, f, ch)) + sample(2, q, f, ch)));
    assert.deepEqual(g.frameOf('mix.wav', OFFSET + 7 * 128 + 9), [mixAt(7, 9, 0), mixAt(7, 9, 1)]);
    // The lost record (17): silence everywhere, and a gap.
    assert.deepEqual(g.frameOf('mix.wav', OFFSET + 17 * 128 + 5), [0, 0]);
    assert.deepEqual(g.info.heardGaps, [{ atFrame: OFFSET + 17 * 128, frames: 128 }]);
    assert.deepEqual(g.frameOf('heard-2.wav', OFFSET + 18 * 128), [pcm(sample(2, 18, 0, 0)), pcm(sample(2, 18, 0, 1))]);

    const bob = g.info.tracks[2]!;
    assert.deepEqual(bob.present, [
      { atFrame: OFFSET, frames: 10 * 128 },
      { atFrame: OFFSET + 15 * 128, frames: 2 * 128 },
      { atFrame: OFFSET + 18 * 128, frames: 2 * 128 },
    ]);
    assert.deepEqual(bob.spans, [{ kind: 'concealed', atFrame: OFFSET + 3 * 128, frames: 3 * 128 }], 'the flagged render and the two after it, which can play what it concealed');
    assert.ok(g.saves() >= 3, 'the sidecar is written as each track is added, before its audio');
  });

  test('a first heard frame before the input started: its frames before frame 0 are cut, the rest lands to the frame', async () => {
    const g = await rig({ offsetFrames: -200 });
    for (let q = 0; q < 6; q++) g.render(q, [{ track: 1 }]);
    await g.drain();
    g.heard.close(6 * 128 - 200);
    assert.equal(g.info.alignment?.heardOffsetFrames, -200);
    // Take frame 0 is quantum 1's frame 72 (quantum 0 starts at −200).
    assert.deepEqual(g.frameOf('heard-1.wav', 0), [pcm(sample(1, 1, 72, 0)), pcm(sample(1, 1, 72, 1))]);
    assert.deepEqual(g.frameOf('heard-1.wav', 56), [pcm(sample(1, 2, 0, 0)), pcm(sample(1, 2, 0, 1))]);
    assert.equal(g.frames('heard-1.wav'), 6 * 128 - 200);
    assert.deepEqual(g.info.tracks[2]!.present, [{ atFrame: 0, frames: 6 * 128 - 200 }]);
  });

  test('the same track twice in one record (an old link still playing out as the new one starts) is summed, as the mix heard it', async () => {
    const g = await rig({ offsetFrames: 0 });
    g.render(0, [{ track: 1 }, { track: 1, flags: HeardFlag.UNDERRUN }]);
    await g.drain();
    g.heard.close(128);
    const twice = (f: number, ch: number): number => pcm(Math.fround(Math.fround(sample(1, 0, f, ch)) + Math.fround(sample(1, 0, f, ch))));
    assert.deepEqual(g.frameOf('heard-1.wav', 10), [twice(10, 0), twice(10, 1)]);
    assert.deepEqual(g.info.tracks[2]!.spans, [{ kind: 'underrun', atFrame: 0, frames: 128 }], 'clamped at the end of the take');
  });

  test('no speaker reading in time: the heard tracks start at the input frame 0, and the sidecar says they are not aligned', async () => {
    const g = await rig({ offsetFrames: null });
    g.render(0, [{ track: 1 }]);
    await g.drain(0);
    assert.equal(g.info.alignment, undefined, 'it waits for a reading first');
    await g.drain(ALIGN_WAIT_MS);
    g.heard.close(128);
    assert.equal((g.info as TakeInfo).alignment?.by, 'none');
    assert.deepEqual(g.frameOf('heard-1.wav', 0), [pcm(sample(1, 0, 0, 0)), pcm(sample(1, 0, 0, 1))]);
  });

  test('the writer pushes nothing once the take is off, and counts records the ring had no room for', () => {
    const mem = createHeardMemory();
    const v = new HeardViews(mem);
    const w = new HeardWriter();
    w.attach(v);
    assert.equal(w.begin(0, 0), false, 'off until the page turns it on');
    Atomics.store(v.i32, HEARD_I32.ON, 1);
    const z64 = new Float64Array(QUANTUM_FRAMES);
    const z32 = new Float32Array(QUANTUM_FRAMES);
    let q = 0;
    while (Atomics.load(v.i32, HEARD_I32.OVERFLOWS) === 0) {
      assert.equal(w.begin(q++, 0), true);
      for (let k = 0; k < 8; k++) w.addPeer(k + 1, 0, z64, z64);
      w.finish(z32, z32);
    }
    assert.ok(q > 700, `the ring holds about 2 s of 8 peers (${q} records)`);
    Atomics.store(v.i32, HEARD_I32.ON, 0);
    assert.equal(w.begin(q, 0), false);
  });
});
