// A take's archive (workers/zip.ts, workers/take-export.ts): a ZIP that Python's zipfile (an
// independent reader) opens and verifies, CRCs included, holding each track byte for byte; heard
// tracks exported "as played" are moved earlier by their one-way delay, same length, same header.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { TakeInfo } from '../../src/shared/recorder-protocol.ts';
import { entryNames, shiftedWav, takeArchive } from '../../workers/take-export.ts';
import { crc32 } from '../../workers/zip.ts';

/** A fake 24-bit stereo WAV: a 44-byte header of 0xEE, then frame k = 6 bytes of (k & 0xff). */
function wav(frames: number): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(44 + frames * 6).fill(0xee, 0, 44);
  for (let k = 0; k < frames; k++) b.fill(k & 0xff, 44 + 6 * k, 50 + 6 * k);
  return b;
}

test('crc32 is the ZIP one', async () => {
  assert.equal(await crc32(new Blob(['123456789'])), 0xcbf43926);
});

test('a take archive: every track and the sidecar, verified by an independent reader; as played, heard tracks move earlier by their delay', async () => {
  const take: TakeInfo = {
    id: '2026-11-24T10-00-00-lesson', title: 'lesson', startedAt: '2026-11-24T10:00:00.000Z', sampleRate: 48_000, bitsPerSample: 24, channels: 2, gaps: [], state: 'complete',
    tracks: [
      { name: 'input', file: 'input.wav', bytes: 0, frames: 100, kind: 'input' },
      { name: 'mix', file: 'mix.wav', bytes: 0, frames: 100, kind: 'mix' },
      { name: 'Bob/the bass', file: 'heard-1.wav', bytes: 0, frames: 100, kind: 'heard', track: 1, oneWayMs: 0.25 },
      { name: 'input', file: 'heard-2.wav', bytes: 0, frames: 100, kind: 'heard', track: 2 },
    ],
  };
  assert.deepEqual(entryNames(take), ['input.wav', 'mix.wav', 'Bob_the bass.wav', 'input (2).wav']);
  const files: Record<string, Uint8Array<ArrayBuffer>> = { 'input.wav': wav(100), 'mix.wav': wav(100), 'heard-1.wav': wav(100), 'heard-2.wav': wav(100) };
  const dir = mkdtempSync(join(tmpdir(), 'tutti-zip-'));
  try {
    for (const asPlayed of [false, true]) {
      const blob = await takeArchive(take, async (f) => new Blob([files[f]!]), asPlayed);
      const path = join(dir, `a${asPlayed}.zip`);
      writeFileSync(path, new Uint8Array(await blob.arrayBuffer()));
      const py = `import zipfile,sys,json,hashlib
z=zipfile.ZipFile(sys.argv[1]); bad=z.testzip()
print(json.dumps({"bad":bad,"files":{i.filename:hashlib.sha1(z.read(i)).hexdigest() for i in z.infolist()},"sidecar":json.loads(z.read(z.namelist()[-1]))}))`;
      const out = JSON.parse(execFileSync('python3', ['-c', py, path], { encoding: 'utf8' })) as { bad: string | null; files: Record<string, string>; sidecar: Record<string, unknown> };
      assert.equal(out.bad, null, 'every CRC checks out');
      const sha = async (b: Blob): Promise<string> => (await import('node:crypto')).createHash('sha1').update(new Uint8Array(await b.arrayBuffer())).digest('hex');
      const p = `${take.id}/`;
      assert.deepEqual(Object.keys(out.files), [`${p}input.wav`, `${p}mix.wav`, `${p}Bob_the bass.wav`, `${p}input (2).wav`, `${p}take.json`]);
      assert.equal(out.files[`${p}input.wav`], await sha(new Blob([files['input.wav']!])));
      // 0.25 ms at 48 kHz = 12 frames earlier, as played; the track without a delay is untouched.
      const bob = asPlayed ? shiftedWav(new Blob([files['heard-1.wav']!]), 12) : new Blob([files['heard-1.wav']!]);
      assert.equal(out.files[`${p}Bob_the bass.wav`], await sha(bob));
      assert.equal(out.files[`${p}input (2).wav`], await sha(new Blob([files['heard-2.wav']!])));
      assert.equal('exportedAsPlayed' in out.sidecar, asPlayed);
    }
    const s = new Uint8Array(await shiftedWav(new Blob([wav(100)]), 12).arrayBuffer());
    assert.equal(s.length, 44 + 600, 'same length');
    assert.equal(s[44], 12, 'frame 0 is what was frame 12');
    assert.equal(s[44 + 6 * 87], 99);
    assert.equal(s[44 + 6 * 88], 0, 'silence at the end');
    assert.equal(s[0], 0xee);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
