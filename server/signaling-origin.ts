// Who may open a signaling socket (Node, checked on the HTTP upgrade before any WebSocket
// exists). The Origin check stops OTHER WEB PAGES: a page on any site can open a WebSocket to any
// server, and its browser then sends that page's origin, which the page cannot forge. It is no
// defence against programs, which may send any Origin they like; the hub's limits are.

/** Hosts whose pages are always allowed: this machine (development, tests, the bench pages). */
const LOCAL_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

export type OriginVerdict = { ok: true; why: 'no-origin' | 'any' | 'same-host' | 'localhost' | 'allowed' } | { ok: false; why: string };

/**
 * Default: an Origin whose host (name and port) equals the request's Host header (the page this
 * server served), or a localhost / 127.0.0.1 / [::1] origin on any port. `allowed` widens it
 * (exact origins, as normalised by `parseAllowedOrigins`; `*` = any).
 *
 * A request with NO Origin header is allowed: browsers always send one on WebSocket handshakes,
 * so only a non-browser client omits it, and such a client could as well send an allowed one.
 * `Origin: null` (sandboxed frames, file: pages) is refused.
 */
export function checkOrigin(origin: string | undefined, host: string | undefined, allowed: readonly string[]): OriginVerdict {
  if (origin === undefined) return { ok: true, why: 'no-origin' };
  if (allowed.includes('*')) return { ok: true, why: 'any' };
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return { ok: false, why: 'Origin is not a URL' };
  }
  if (url.origin === 'null') return { ok: false, why: 'opaque origin' };
  if (LOCAL_HOSTNAMES.has(url.hostname)) return { ok: true, why: 'localhost' };
  if (host !== undefined && host.toLowerCase() === url.host) return { ok: true, why: 'same-host' };
  if (allowed.includes(url.origin)) return { ok: true, why: 'allowed' };
  return { ok: false, why: `origin ${url.origin} is neither this server's (${host ?? 'no Host header'}) nor allowed` };
}

/**
 * Parse TUTTI_ALLOWED_ORIGINS: comma-separated origins (`https://host[:port]`) or `*`. Throws
 * with the offending entry when one is not an http(s) origin (a path, a typo), so a mistake stops
 * the server instead of silently refusing everyone.
 */
export function parseAllowedOrigins(value: string): string[] {
  const out: string[] = [];
  for (const raw of value.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    if (entry === '*') {
      out.push('*');
      continue;
    }
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new Error(`'${entry}' is not an origin (expected e.g. https://tutti.example.org or *)`);
    }
    const bare = url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '' && url.password === '';
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !bare) {
      throw new Error(`'${entry}' is not an origin (expected scheme://host[:port] with nothing after it, e.g. https://tutti.example.org)`);
    }
    out.push(url.origin);
  }
  return out;
}
