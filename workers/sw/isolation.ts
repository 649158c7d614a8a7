// Service worker (and Node unit tests): the cross-origin-isolation headers the service worker adds
// to every same-origin response it serves, so the page is crossOriginIsolated (SharedArrayBuffer)
// even when the host that served the files set no headers at all (as coi-serviceworker does).

/** The same three headers server/http.ts sends; the page needs COOP + COEP, CORP is for embedding. */
export const SW_ISOLATION_HEADERS: Readonly<Record<string, string>> = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/**
 * The response with the isolation headers set. Returns the same object when they are already
 * there; opaque and opaque-redirect responses (status 0) cannot be rebuilt and are returned as is.
 * The body is streamed through, not read.
 */
export function withIsolationHeaders(response: Response): Response {
  if (response.status === 0 || response.type === 'opaque' || response.type === 'opaqueredirect') return response;
  const headers = new Headers(response.headers);
  let changed = false;
  for (const [name, value] of Object.entries(SW_ISOLATION_HEADERS)) {
    if (headers.get(name) !== value) {
      headers.set(name, value);
      changed = true;
    }
  }
  if (!changed) return response;
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
