// Page (main thread): this device's key for each lesson room, kept in IndexedDB. The private key is
// a non-extractable CryptoKey (stored as is; the browser never hands its bytes to script), so the
// teacher's authority stays with the browser profile that created the room (or was handed it).
// Clearing the site's data gives it up: the room then has no teacher until one is handed over
// (and with no teacher present, no one can hand it over: make a new lesson room).

import { newLessonKey, type LessonKey } from './lesson-authority.ts';

const DB = 'tutti-lesson-keys';
const STORE = 'keys';

function open(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB unavailable'));
  });
}

async function run<T>(mode: IDBTransactionMode, fn: (s: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await open();
  try {
    return await new Promise<T>((resolve, reject) => {
      const req = fn(db.transaction(STORE, mode).objectStore(STORE));
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error ?? new Error('IndexedDB request failed'));
    });
  } finally {
    db.close();
  }
}

/** This device's key for lesson room `room`, or undefined. */
export async function loadLessonKey(room: string): Promise<LessonKey | undefined> {
  const k = await run<unknown>('readonly', (s) => s.get(room));
  const x = k as Partial<LessonKey> | undefined;
  return x && x.privateKey instanceof CryptoKey && typeof x.pub === 'string' ? { privateKey: x.privateKey, pub: x.pub } : undefined;
}

export async function saveLessonKey(room: string, key: LessonKey): Promise<void> {
  await run('readwrite', (s) => s.put(key, room));
}

/** This device's key for `room`, made and kept on first use (a student's key: the teacher may hand the role to it). */
export async function lessonKeyFor(room: string): Promise<LessonKey> {
  const k = await loadLessonKey(room);
  if (k) return k;
  const made = await newLessonKey();
  await saveLessonKey(room, made);
  return made;
}
