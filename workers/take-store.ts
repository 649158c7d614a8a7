// Recorder worker: where takes live in the Origin Private File System. Each take is a folder
// `takes/<id>/` holding its tracks (24-bit WAV) and its sidecar `take.json` (TakeInfo). Files are
// written only through synchronous access handles, which also lock them: a take another tab is
// still recording cannot be opened, so recovery leaves it alone.

import type { TakeInfo, TrackInfo } from '../src/shared/recorder-protocol.ts';
import { WAV_FRAME_BYTES, WAV_HEADER_BYTES, padWav, recoverWav } from './wav-writer.ts';

const TAKES_DIR = 'takes';
const SIDECAR = 'take.json';

export async function takesDir(): Promise<FileSystemDirectoryHandle> {
  const root = await navigator.storage.getDirectory();
  return root.getDirectoryHandle(TAKES_DIR, { create: true });
}

export async function takeDir(id: string, create = false): Promise<FileSystemDirectoryHandle> {
  return (await takesDir()).getDirectoryHandle(id, { create });
}

/** The sidecar writes of this worker, one after another (a file takes one access handle at a time). */
let sidecarQueue: Promise<void> = Promise.resolve();

/**
 * Write the sidecar whole (truncate, write, flush): a crash leaves the previous or the new one.
 * Writes queue behind each other, so any caller may write at any time.
 */
export function writeSidecar(dir: FileSystemDirectoryHandle, take: TakeInfo): Promise<void> {
  const done = sidecarQueue.then(() => writeSidecarNow(dir, take));
  sidecarQueue = done.catch(() => {});
  return done;
}

async function writeSidecarNow(dir: FileSystemDirectoryHandle, take: TakeInfo): Promise<void> {
  const h = await (await dir.getFileHandle(SIDECAR, { create: true })).createSyncAccessHandle();
  try {
    const bytes = new TextEncoder().encode(JSON.stringify(take, null, 1));
    h.truncate(0);
    h.write(bytes, { at: 0 });
    h.flush();
  } finally {
    h.close();
  }
}

export async function readSidecar(dir: FileSystemDirectoryHandle): Promise<TakeInfo | null> {
  try {
    const file = await (await dir.getFileHandle(SIDECAR)).getFile();
    const t = JSON.parse(await file.text()) as TakeInfo;
    return typeof t.id === 'string' && Array.isArray(t.tracks) ? t : null;
  } catch {
    return null;
  }
}

/** Every take with a readable sidecar, newest first. */
export async function listTakes(): Promise<TakeInfo[]> {
  const out: TakeInfo[] = [];
  for await (const [, handle] of (await takesDir()).entries()) {
    if (handle.kind !== 'directory') continue;
    const t = await readSidecar(handle as FileSystemDirectoryHandle);
    if (t) out.push(t);
  }
  return out.sort((a, b) => (a.startedAt < b.startedAt ? 1 : -1));
}

export async function deleteTake(id: string): Promise<void> {
  await (await takesDir()).removeEntry(id, { recursive: true });
}

/**
 * Repair every take left in state 'recording' (the tab or the browser died mid-take) whose files
 * nobody holds: each track keeps its whole frames with a patched header, and the sidecar says
 * 'recovered'; its tracks end together (the shorter padded with silence). Returns the ids repaired.
 */
export async function recoverTakes(activeId: string | null): Promise<string[]> {
  const repaired: string[] = [];
  for await (const [name, handle] of (await takesDir()).entries()) {
    if (handle.kind !== 'directory' || name === activeId) continue;
    const dir = handle as FileSystemDirectoryHandle;
    const take = await readSidecar(dir);
    if (!take || take.state !== 'recording') continue;
    const handles: FileSystemSyncAccessHandle[] = [];
    try {
      for (const track of take.tracks) handles.push(await (await dir.getFileHandle(track.file, { create: true })).createSyncAccessHandle());
      const frames = handles.map((h) => recoverWav(h, take.sampleRate));
      // The tracks end together, as a finished take's do: the shorter ones (a checkpoint apart) end in silence.
      const end = Math.max(0, ...frames);
      take.tracks.forEach((track, i) => {
        track.frames = padWav(handles[i]!, frames[i]!, end, take.sampleRate);
        track.bytes = WAV_HEADER_BYTES + track.frames * WAV_FRAME_BYTES;
        clampToTrack(track);
      });
    } catch {
      continue; // locked: another tab is recording it now
    } finally {
      for (const h of handles) h.close();
    }
    take.state = 'recovered';
    take.endedBy = 'page-closed';
    await writeSidecar(dir, take);
    repaired.push(take.id);
  }
  return repaired;
}

/** A recovered heard track's presence and spans (as of the last sidecar) end where its audio does. */
function clampToTrack(track: TrackInfo): void {
  const end = track.frames;
  const clip = <T extends { atFrame: number; frames: number }>(list: T[] | undefined): T[] | undefined =>
    list?.filter((x) => x.atFrame < end).map((x) => ({ ...x, frames: Math.min(x.frames, end - x.atFrame) }));
  if (track.present) track.present = clip(track.present)!;
  if (track.spans) track.spans = clip(track.spans)!;
}
