// Server settings from the environment (Node), validated at start: a bad value stops the server
// with the reason. TUTTI_ICE_SERVERS (JSON list of STUN/TURN servers) is also what the page needs,
// served as GET /config.json; TUTTI_ALLOWED_ORIGINS and TUTTI_OPEN_ROOMS configure the hub.

import { parseIceServers, type ClientConfig } from '../src/shared/ice-servers.ts';
import type { SignalingOptions } from './signaling-limits.ts';
import { parseAllowedOrigins } from './signaling-origin.ts';

export class ConfigError extends Error {}

/** The page's config from the environment; throws ConfigError with a clear message on bad input. */
export function clientConfigFromEnv(env: NodeJS.ProcessEnv): ClientConfig {
  const parsed = parseIceServers(env['TUTTI_ICE_SERVERS'] ?? '');
  if (!parsed.ok) throw new ConfigError(`TUTTI_ICE_SERVERS: ${parsed.error}`);
  return { iceServers: parsed.servers };
}

/**
 * The hub's settings from the environment: TUTTI_ALLOWED_ORIGINS (comma-separated origins that
 * may open signaling sockets besides the page's own and localhost; `*` = any) and
 * TUTTI_OPEN_ROOMS=0 (no open-rooms list). Throws ConfigError on a malformed origin.
 */
export function signalingFromEnv(env: NodeJS.ProcessEnv): Pick<SignalingOptions, 'allowedOrigins' | 'openRooms'> {
  let allowedOrigins: string[];
  try {
    allowedOrigins = parseAllowedOrigins(env['TUTTI_ALLOWED_ORIGINS'] ?? '');
  } catch (err) {
    throw new ConfigError(`TUTTI_ALLOWED_ORIGINS: ${(err as Error).message}`);
  }
  return { allowedOrigins, openRooms: !/^(0|false|no|off)$/i.test(env['TUTTI_OPEN_ROOMS'] ?? '') };
}
