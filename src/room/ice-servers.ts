// Page: which STUN/TURN servers the audio connections use. A per-device override (localStorage
// `tutti.iceServers`, edited in <tutti-settings>) wins; otherwise the server's list from
// /config.json (env TUTTI_ICE_SERVERS); otherwise none (LAN and loopback need none).

import { parseIceServers, validateIceServers, type IceParse, type IceServer } from '../shared/ice-servers.ts';

export const ICE_OVERRIDE_KEY = 'tutti.iceServers';

/** The stored per-device override: null when none is set, else its parse result. */
export function deviceIceOverride(): (IceParse & { text: string }) | null {
  const text = localStorage.getItem(ICE_OVERRIDE_KEY);
  if (text === null) return null;
  return { ...parseIceServers(text), text };
}

/** Store a per-device override after validating it; returns the parse result (not stored on error). */
export function saveDeviceIceOverride(text: string): IceParse {
  const parsed = parseIceServers(text);
  if (parsed.ok) localStorage.setItem(ICE_OVERRIDE_KEY, JSON.stringify(parsed.servers, null, 2));
  return parsed;
}

export function clearDeviceIceOverride(): void {
  localStorage.removeItem(ICE_OVERRIDE_KEY);
}

/** The server's list from /config.json; an unreachable or invalid config counts as empty. */
export async function serverIceServers(): Promise<IceServer[]> {
  try {
    const res = await fetch('/config.json', { cache: 'no-cache' });
    if (!res.ok) return [];
    const body = (await res.json()) as { iceServers?: unknown };
    const parsed = validateIceServers(body.iceServers ?? []);
    if (!parsed.ok) console.warn(`Tutti: ignoring the server's ICE servers: ${parsed.error}`);
    return parsed.ok ? parsed.servers : [];
  } catch {
    return [];
  }
}

/** The list to connect with: a valid device override, else the server's. */
export async function effectiveIceServers(): Promise<IceServer[]> {
  const own = deviceIceOverride();
  if (own?.ok) return own.servers;
  if (own) console.warn(`Tutti: ignoring this device's ICE servers setting: ${own.error}`);
  return serverIceServers();
}
