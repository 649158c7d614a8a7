// Recorder worker: a finished take as one archive (zip.ts): every track, and the sidecar. On
// request the heard tracks are shifted by each participant's measured one-way delay: moved that
// much earlier (silence added at the end, so every track keeps its length), they line up with
// when the participant played, not when we heard it. Built from the files as Blob parts: the
// samples are read only for the CRC, never copied into memory.

import type { TakeInfo, TrackInfo } from '../src/shared/recorder-protocol.ts';
import { WAV_FRAME_BYTES, WAV_HEADER_BYTES } from './wav-writer.ts';
import { zip, type ZipEntry } from './zip.ts';

/** A WAV track moved `frames` earlier: its first frames dropped, as many of silence at the end, same header. */
export function shiftedWav(file: Blob, frames: number): Blob {
  const cut = Math.min(frames * WAV_FRAME_BYTES, file.size - WAV_HEADER_BYTES);
  if (cut <= 0) return file;
  return new Blob([file.slice(0, WAV_HEADER_BYTES), file.slice(WAV_HEADER_BYTES + cut), new Uint8Array(cut)]);
}

/** Frames a heard track is moved earlier when exported as played (0 without a measured delay). */
export function shiftFrames(track: TrackInfo, sampleRate: number): number {
  return track.kind === 'heard' && track.oneWayMs !== undefined && track.oneWayMs > 0 ? Math.round((track.oneWayMs * sampleRate) / 1000) : 0;
}

/** File names inside the archive: the track's name, made safe and unique. */
export function entryNames(take: TakeInfo): string[] {
  const used = new Set<string>();
  return take.tracks.map((t) => {
    const base = t.name.replace(/[^\p{L}\p{N} ._-]+/gu, '_').trim().slice(0, 60) || `track-${t.track ?? 0}`;
    let name = base;
    for (let k = 2; used.has(name.toLowerCase()); k++) name = `${base} (${k})`;
    used.add(name.toLowerCase());
    return `${name}.wav`;
  });
}

/** The take's archive: `<id>/<track>.wav` for each track and `<id>/take.json`. */
export async function takeArchive(take: TakeInfo, open: (file: string) => Promise<Blob>, asPlayed: boolean): Promise<Blob> {
  const names = entryNames(take);
  const entries: ZipEntry[] = [];
  const shifted: Record<string, number> = {};
  for (let i = 0; i < take.tracks.length; i++) {
    const t = take.tracks[i]!;
    let data = await open(t.file);
    const frames = asPlayed ? shiftFrames(t, take.sampleRate) : 0;
    if (frames > 0) {
      data = shiftedWav(data, frames);
      shifted[names[i]!] = frames;
    }
    entries.push({ name: `${take.id}/${names[i]}`, data });
  }
  const sidecar = { ...take, ...(asPlayed ? { exportedAsPlayed: { shiftedEarlierFrames: shifted } } : {}) };
  entries.push({ name: `${take.id}/take.json`, data: new Blob([JSON.stringify(sidecar, null, 1)], { type: 'application/json' }) });
  return zip(entries, take.startedAt ? new Date(take.startedAt) : new Date());
}
