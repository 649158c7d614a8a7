// Service worker: the cache version, derived from the precache manifest (every entry's URL and
// revision), so a build that changes any precached file gets new cache names and one that changes
// nothing keeps them.

export interface ManifestEntryLike {
  url: string;
  revision?: string | null;
}

/** 8 hex digits of FNV-1a over the sorted entries. Stable across builds with identical content. */
export function manifestVersion(entries: ReadonlyArray<ManifestEntryLike | string>): string {
  const lines = entries.map((e) => (typeof e === 'string' ? e : `${e.url} ${e.revision ?? ''}`)).sort();
  let h = 0x811c9dc5;
  for (const line of lines) {
    for (let i = 0; i < line.length; i++) {
      h ^= line.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    h ^= 0x0a;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** Cache Storage names owned by Tutti: `tutti-precache-<version>`, `tutti-runtime-<version>`. */
export const CACHE_PREFIX = 'tutti';

/** Which existing cache names belong to an older version and should be deleted on activate. */
export function outdatedCaches(existing: readonly string[], version: string): string[] {
  const mine = /^tutti-(precache|runtime)-(.+)$/;
  return existing.filter((name) => {
    const m = mine.exec(name);
    return m !== null && m[2] !== version;
  });
}
