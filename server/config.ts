// Server settings from the environment that the page needs too, served as GET /config.json:
// TUTTI_ICE_SERVERS (JSON list of STUN/TURN servers, validated; a bad value stops the server).

import { parseIceServers, type ClientConfig } from '../src/shared/ice-servers.ts';

export class ConfigError extends Error {}

/** The page's config from the environment; throws ConfigError with a clear message on bad input. */
export function clientConfigFromEnv(env: NodeJS.ProcessEnv): ClientConfig {
  const parsed = parseIceServers(env['TUTTI_ICE_SERVERS'] ?? '');
  if (!parsed.ok) throw new ConfigError(`TUTTI_ICE_SERVERS: ${parsed.error}`);
  return { iceServers: parsed.servers };
}
