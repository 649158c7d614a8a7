// Recorder worker: one track of a take as a 24-bit stereo WAV file, written through a synchronous
// file handle (OPFS FileSystemSyncAccessHandle in the browser, a fake in the unit tests). Crash
// safety comes from the order of writes: samples are appended after the header, and once a second
// (checkpoint) the header's sizes are patched to what is on disk and the file flushed; a take cut
// off between checkpoints is repaired on the next start by recoverWav, which trusts only whole
// frames on disk. A refused write (storage full) never costs what was written before it.

import { floatToPcm24 } from '../src/shared/wire.ts';

export const WAV_HEADER_BYTES = 44;
export const WAV_CHANNELS = 2;
export const WAV_BITS = 24;
/** Bytes of one stereo 24-bit frame. */
export const WAV_FRAME_BYTES = (WAV_CHANNELS * WAV_BITS) / 8;

/** The calls of FileSystemSyncAccessHandle the writer needs. */
export interface SyncFile {
  write(buffer: Uint8Array, options: { at: number }): number;
  read(buffer: Uint8Array, options: { at: number }): number;
  getSize(): number;
  truncate(size: number): void;
  flush(): void;
  close(): void;
}

/** A write the file refused or cut short (QuotaExceededError, or fewer bytes than asked). */
export class WriteRefused extends Error {
  constructor(readonly reason: unknown) {
    super(`the file refused a write: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
}

/** The 44-byte header of a PCM WAV file of `dataBytes` sample bytes, 24-bit stereo. */
export function wavHeader(out: Uint8Array, dataBytes: number, sampleRate: number): void {
  const v = new DataView(out.buffer, out.byteOffset, WAV_HEADER_BYTES);
  const ascii = (at: number, s: string): void => {
    for (let i = 0; i < 4; i++) v.setUint8(at + i, s.charCodeAt(i));
  };
  ascii(0, 'RIFF');
  v.setUint32(4, 36 + dataBytes, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true); // PCM
  v.setUint16(22, WAV_CHANNELS, true);
  v.setUint32(24, sampleRate, true);
  v.setUint32(28, sampleRate * WAV_FRAME_BYTES, true);
  v.setUint16(32, WAV_FRAME_BYTES, true);
  v.setUint16(34, WAV_BITS, true);
  ascii(36, 'data');
  v.setUint32(40, dataBytes, true);
}

export class WavTrackWriter {
  /** Whole frames on disk after the header. */
  frames = 0;
  private readonly header = new Uint8Array(WAV_HEADER_BYTES);
  /** Preallocated conversion buffer: `maxFrames` frames per append. */
  private readonly bytes: Uint8Array;

  constructor(
    private readonly file: SyncFile,
    private readonly sampleRate: number,
    readonly maxFrames: number,
  ) {
    this.bytes = new Uint8Array(maxFrames * WAV_FRAME_BYTES);
    file.truncate(0);
    this.writeHeader();
    file.flush();
  }

  /** Bytes of the file (header included). */
  get size(): number {
    return WAV_HEADER_BYTES + this.frames * WAV_FRAME_BYTES;
  }

  /**
   * Append `frames` (≤ maxFrames) stereo frames from interleaved floats at `src[from..]`, or
   * silence when `src` is null. Throws WriteRefused when the file takes less than all of it; the
   * file is then cut back to the frames before, with its header patched and flushed.
   */
  append(src: Float32Array | null, frames: number, from = 0): void {
    const b = this.bytes;
    const n = frames * WAV_CHANNELS;
    if (frames > this.maxFrames) throw new RangeError(`append of ${frames} frames, at most ${this.maxFrames}`);
    if (src) {
      for (let i = 0, o = 0; i < n; i++, o += 3) {
        const s = floatToPcm24(src[from + i]!);
        b[o] = s & 0xff;
        b[o + 1] = (s >> 8) & 0xff;
        b[o + 2] = (s >> 16) & 0xff;
      }
    } else {
      b.fill(0, 0, n * 3);
    }
    const want = n * 3;
    let wrote: number;
    try {
      wrote = this.file.write(b.subarray(0, want), { at: this.size });
    } catch (err) {
      this.cutBack();
      throw new WriteRefused(err);
    }
    if (wrote !== want) {
      this.cutBack();
      throw new WriteRefused(`${wrote} of ${want} bytes written`);
    }
    this.frames += frames;
  }

  /** Patch the header to what is on disk and flush: a crash after this loses nothing before it. */
  checkpoint(): void {
    this.writeHeader();
    this.file.flush();
  }

  /** Checkpoint and close the handle. */
  close(): void {
    try {
      this.checkpoint();
    } finally {
      this.file.close();
    }
  }

  private writeHeader(): void {
    wavHeader(this.header, this.frames * WAV_FRAME_BYTES, this.sampleRate);
    this.file.write(this.header, { at: 0 });
  }

  /** After a refused write: drop any partial frames it left, keep everything before. */
  private cutBack(): void {
    try {
      this.file.truncate(this.size);
      this.checkpoint();
    } catch {
      // The disk is full or gone: recoverWav repairs the header on the next start.
    }
  }
}

/**
 * Repair a track a crash left open: keep the whole frames on disk, drop a partial one, and patch
 * the header's sizes. Returns the frames kept. A file too short for a header gets an empty one.
 */
export function recoverWav(file: SyncFile, sampleRate: number): number {
  const size = file.getSize();
  const frames = size < WAV_HEADER_BYTES ? 0 : Math.floor((size - WAV_HEADER_BYTES) / WAV_FRAME_BYTES);
  const keep = WAV_HEADER_BYTES + frames * WAV_FRAME_BYTES;
  if (size !== keep) file.truncate(keep);
  const header = new Uint8Array(WAV_HEADER_BYTES);
  wavHeader(header, frames * WAV_FRAME_BYTES, sampleRate);
  file.write(header, { at: 0 });
  file.flush();
  return frames;
}

/**
 * Lengthen a repaired track of `frames` frames with silence to `toFrames` (truncate pads with
 * zeros), so a recovered take's tracks all end together as a finished take's do. Where storage
 * refuses, the track stays as it was. Returns its frames.
 */
export function padWav(file: SyncFile, frames: number, toFrames: number, sampleRate: number): number {
  if (toFrames <= frames) return frames;
  try {
    file.truncate(WAV_HEADER_BYTES + toFrames * WAV_FRAME_BYTES);
  } catch {
    return recoverWav(file, sampleRate); // a partial extension, if any, is cut back to whole frames
  }
  const header = new Uint8Array(WAV_HEADER_BYTES);
  wavHeader(header, toFrames * WAV_FRAME_BYTES, sampleRate);
  file.write(header, { at: 0 });
  file.flush();
  return toFrames;
}
