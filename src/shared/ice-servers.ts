// ICE server lists (STUN/TURN) as JSON, validated the same way on the server (TUTTI_ICE_SERVERS)
// and on the page (per-device override in <tutti-settings>), with an error that says what is wrong.

/** The subset of RTCIceServer Tutti accepts. */
export interface IceServer {
  urls: string | string[];
  username?: string;
  credential?: string;
}

export type IceParse = { ok: true; servers: IceServer[] } | { ok: false; error: string };

const SCHEME = /^(stun|stuns|turn|turns):[^\s]+$/;

/** Validate parsed JSON as an ICE server list. */
export function validateIceServers(value: unknown): IceParse {
  if (!Array.isArray(value)) return { ok: false, error: 'ICE servers must be a JSON array, e.g. [{"urls": "stun:stun.example.org:3478"}].' };
  const servers: IceServer[] = [];
  for (let i = 0; i < value.length; i++) {
    const at = `ICE server ${i + 1}`;
    const entry: unknown = value[i];
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return { ok: false, error: `${at}: must be an object with "urls".` };
    const e = entry as Record<string, unknown>;
    for (const key of Object.keys(e)) {
      if (key !== 'urls' && key !== 'username' && key !== 'credential') return { ok: false, error: `${at}: unknown field "${key}" (allowed: urls, username, credential).` };
    }
    const urls = typeof e['urls'] === 'string' ? [e['urls']] : e['urls'];
    if (!Array.isArray(urls) || urls.length === 0) return { ok: false, error: `${at}: "urls" must be a URL string or a non-empty array of them.` };
    for (const u of urls) {
      if (typeof u !== 'string' || !SCHEME.test(u)) {
        return { ok: false, error: `${at}: "${String(u)}" is not a stun:, stuns:, turn: or turns: URL.` };
      }
    }
    for (const key of ['username', 'credential'] as const) {
      if (e[key] !== undefined && typeof e[key] !== 'string') return { ok: false, error: `${at}: "${key}" must be a string.` };
    }
    const isTurn = (urls as string[]).some((u) => u.startsWith('turn'));
    if (isTurn && (typeof e['username'] !== 'string' || typeof e['credential'] !== 'string')) {
      return { ok: false, error: `${at}: a TURN server needs "username" and "credential".` };
    }
    const server: IceServer = { urls: e['urls'] as string | string[] };
    if (typeof e['username'] === 'string') server.username = e['username'];
    if (typeof e['credential'] === 'string') server.credential = e['credential'];
    servers.push(server);
  }
  return { ok: true, servers };
}

/** Parse and validate JSON text. Empty text means "no ICE servers". */
export function parseIceServers(text: string): IceParse {
  if (text.trim() === '') return { ok: true, servers: [] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `ICE servers are not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  return validateIceServers(value);
}

/** What GET /config.json returns to the page. */
export interface ClientConfig {
  iceServers: IceServer[];
}
