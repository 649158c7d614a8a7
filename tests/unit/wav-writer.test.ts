// The recorder's WAV writer (workers/wav-writer.ts) under a seeded stress test: random chunk sizes
// and silences into a fake synchronous file that refuses writes past a random quota (throwing, or
// taking part of a write), and crashes at random moments. Properties: what is on disk after a
// refusal or after recovery is exactly the frames accepted before it, as 24-bit samples of the
// floats given, behind a header whose sizes match; nothing accepted is ever lost.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { floatToPcm24 } from '../../src/shared/wire.ts';
import { WAV_FRAME_BYTES, WAV_HEADER_BYTES, WavTrackWriter, WriteRefused, padWav, recoverWav } from '../../workers/wav-writer.ts';
import { FakeFile } from './fake-sync-file.ts';
import { mulberry32, randInt, testSeeds } from './prng.ts';

/** A file holding exactly `content` (what a crash left), for recoverWav. */
function fileOf(content: Uint8Array): FakeFile {
  const f = new FakeFile();
  f.write(content, { at: 0 });
  return f;
}

/** Parse a 24-bit stereo WAV: header sizes, and the samples. */
function parse(b: Uint8Array): { riff: number; data: number; samples: number[] } {
  const v = new DataView(b.buffer, b.byteOffset, b.length);
  assert.equal(String.fromCharCode(...b.subarray(0, 4)), 'RIFF');
  assert.equal(String.fromCharCode(...b.subarray(8, 12)), 'WAVE');
  assert.equal(v.getUint16(22, true), 2);
  assert.equal(v.getUint32(24, true), 48_000);
  assert.equal(v.getUint16(34, true), 24);
  const samples: number[] = [];
  for (let o = WAV_HEADER_BYTES; o + 3 <= b.length; o += 3) samples.push(((b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16)) << 8) >> 8);
  return { riff: v.getUint32(4, true), data: v.getUint32(40, true), samples };
}

describe('recorder: WavTrackWriter', () => {
  test('seeded stress: random chunks and silences, a quota refused by throwing or by a short write; what was accepted is all there, exactly', () => {
    for (const seed of testSeeds([1, 2, 3, 77])) {
      for (const shortWrites of [false, true]) {
        const rng = mulberry32(seed * 2 + (shortWrites ? 1 : 0));
        const quota = randInt(rng, 200, 400_000);
        const file = new FakeFile(quota, shortWrites);
        const msg = `seed ${seed}, quota ${quota}, ${shortWrites ? 'short writes' : 'throws'}`;
        let writer: WavTrackWriter;
        try {
          writer = new WavTrackWriter(file, 48_000, 4096);
        } catch (err) {
          assert.ok(quota < WAV_HEADER_BYTES, `${msg}: the header fits: ${String(err)}`);
          continue;
        }
        const expected: number[] = [];
        let refused = false;
        for (let i = 0; i < 400 && !refused; i++) {
          const frames = randInt(rng, 1, 4096);
          const silent = rng() < 0.1;
          const src = new Float32Array(frames * 2);
          for (let k = 0; k < src.length; k++) src[k] = rng() < 0.01 ? (rng() - 0.5) * 4 : (rng() * 2 - 1) * 0.9; // some beyond full scale
          try {
            writer.append(silent ? null : src, frames);
            for (let k = 0; k < src.length; k++) expected.push(silent ? 0 : floatToPcm24(src[k]!));
          } catch (err) {
            assert.ok(err instanceof WriteRefused, `${msg}: ${String(err)}`);
            refused = true;
          }
          if (rng() < 0.2) writer.checkpoint();
        }
        assert.ok(refused, `${msg}: the quota was reached`);
        // After a refusal the file is cut back to the frames accepted, with a matching header.
        const got = parse(file.content());
        assert.equal(file.size, WAV_HEADER_BYTES + (expected.length / 2) * WAV_FRAME_BYTES, msg);
        assert.equal(got.data, (expected.length / 2) * WAV_FRAME_BYTES, `${msg}: data size`);
        assert.equal(got.riff, 36 + got.data, `${msg}: RIFF size`);
        assert.deepEqual(got.samples, expected, msg);
        assert.equal(writer.frames, expected.length / 2);
      }
    }
  });

  test('crash at a random moment, then recovery: every frame on disk at the crash, whole frames only, a valid header', () => {
    for (const seed of testSeeds([5, 6, 7])) {
      const rng = mulberry32(seed);
      const file = new FakeFile();
      const writer = new WavTrackWriter(file, 48_000, 1000);
      const expected: number[] = [];
      const steps = randInt(rng, 1, 60);
      for (let i = 0; i < steps; i++) {
        const frames = randInt(rng, 1, 1000);
        const src = Float32Array.from({ length: frames * 2 }, () => rng() * 2 - 1);
        writer.append(src, frames);
        for (const x of src) expected.push(floatToPcm24(x));
        if (rng() < 0.3) writer.checkpoint();
      }
      // The crash: the process dies mid-write, leaving 0–5 bytes of a frame after the last whole one.
      const torn = randInt(rng, 0, WAV_FRAME_BYTES - 1);
      const onDisk = new Uint8Array(file.size + torn);
      onDisk.set(file.content());
      onDisk.fill(0x55, file.size);
      const crashed = fileOf(onDisk);
      const frames = recoverWav(crashed, 48_000);
      const got = parse(crashed.content());
      const msg = `seed ${seed}, ${steps} appends, ${torn} torn bytes`;
      assert.equal(frames, expected.length / 2, msg);
      assert.equal(crashed.size, WAV_HEADER_BYTES + frames * WAV_FRAME_BYTES, msg);
      assert.equal(got.data, frames * WAV_FRAME_BYTES, msg);
      assert.deepEqual(got.samples, expected, msg);
    }
  });

  test('a header written before the crash that says less (no checkpoint since) is corrected; a file shorter than a header becomes an empty WAV', () => {
    const file = new FakeFile();
    const writer = new WavTrackWriter(file, 48_000, 128);
    writer.append(new Float32Array(256).fill(0.5), 128);
    assert.equal(parse(file.content()).data, 0, 'no checkpoint yet: the header still says empty');
    const crashed = fileOf(file.content());
    assert.equal(recoverWav(crashed, 48_000), 128);
    assert.equal(parse(crashed.content()).data, 128 * WAV_FRAME_BYTES);
    const stub = fileOf(new Uint8Array(20));
    assert.equal(recoverWav(stub, 48_000), 0);
    assert.equal(stub.size, WAV_HEADER_BYTES);
    assert.equal(parse(stub.content()).data, 0);
  });

  test('padWav: a recovered track ends in silence at the take\'s end; where storage refuses, it stays whole as it was', () => {
    const file = new FakeFile();
    const writer = new WavTrackWriter(file, 48_000, 128);
    writer.append(new Float32Array(256).fill(0.5), 128);
    writer.checkpoint();
    const crashed = fileOf(file.content());
    assert.equal(padWav(crashed, recoverWav(crashed, 48_000), 300, 48_000), 300);
    const got = parse(crashed.content());
    assert.equal(got.data, 300 * WAV_FRAME_BYTES);
    assert.deepEqual(got.samples.slice(0, 256), new Array(256).fill(floatToPcm24(0.5)));
    assert.deepEqual(got.samples.slice(256), new Array(2 * 172).fill(0));
    assert.equal(padWav(crashed, 300, 200, 48_000), 300, 'never shortens');
    const full = new FakeFile(WAV_HEADER_BYTES + 200 * WAV_FRAME_BYTES);
    full.write(crashed.content().subarray(0, WAV_HEADER_BYTES + 128 * WAV_FRAME_BYTES), { at: 0 });
    assert.equal(padWav(full, 128, 300, 48_000), 128, 'storage full: the track keeps its frames');
    assert.equal(parse(full.content()).data, 128 * WAV_FRAME_BYTES);
    assert.deepEqual(parse(full.content()).samples, new Array(256).fill(floatToPcm24(0.5)));
  });

  test('close checkpoints and closes; full-scale samples clamp to the 24-bit range', () => {
    const file = new FakeFile();
    const writer = new WavTrackWriter(file, 48_000, 4);
    writer.append(Float32Array.from([1, -1, 2, -2, 1 / 8_388_608, -1 / 8_388_608, 0, 0.5]), 4);
    writer.close();
    assert.ok(file.closed);
    assert.deepEqual(parse(file.content()).samples, [8_388_607, -8_388_608, 8_388_607, -8_388_608, 1, -1, 0, 4_194_304]);
    assert.equal(parse(file.flushed).data, 4 * WAV_FRAME_BYTES, 'flushed with the final header');
  });
});
