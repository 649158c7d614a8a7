// Page ↔ service worker messages (postMessage to the registration's worker). SKIP_WAITING is the
// message workbox-window's messageSkipWaiting() sends; GET_VERSION is answered on the reply port.

export type ToServiceWorker = { type: 'SKIP_WAITING' } | { type: 'GET_VERSION' };

export interface VersionReply {
  type: 'VERSION';
  /** Cache version (hash of the precache manifest). */
  version: string;
  /** URLs in the precache, relative to the scope, for diagnostics and tests. */
  precached: string[];
}

export function isToServiceWorker(v: unknown): v is ToServiceWorker {
  if (typeof v !== 'object' || v === null) return false;
  const t = (v as { type?: unknown }).type;
  return t === 'SKIP_WAITING' || t === 'GET_VERSION';
}
