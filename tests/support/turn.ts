// Starts Debian's coturn (`turnserver`) on loopback for the TURN fault tests: long-term
// credentials for one static user, UDP only, loopback peers allowed (both browsers' relayed
// addresses are 127.0.0.1). Node side; needs `apt-get install -y coturn`.

import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

export const TURN_BIN = process.env['TURNSERVER_PATH'] ?? '/usr/bin/turnserver';

export interface TurnServer {
  port: number;
  user: string;
  password: string;
  /** The server's log so far (for failure messages). */
  log(): string;
  close(): Promise<void>;
}

/** Why coturn cannot be used here, or null. */
export function turnUnavailable(): string | null {
  if (!existsSync(TURN_BIN)) return `coturn's turnserver is not installed at ${TURN_BIN} (apt-get install -y coturn)`;
  return null;
}

/** A UDP port that was free a moment ago on 127.0.0.1. */
export async function freeUdpPort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  const port = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** One STUN Binding request; resolves true when the server answers within `ms`. */
export async function stunPing(port: number, ms = 300): Promise<boolean> {
  const s = createSocket('udp4');
  const req = Buffer.alloc(20);
  req.writeUInt16BE(0x0001, 0); // Binding request, no attributes
  req.writeUInt32BE(0x2112a442, 4); // magic cookie
  randomBytes(12).copy(req, 8);
  try {
    return await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      s.on('message', (m) => {
        if (m.length >= 20 && m.readUInt16BE(0) === 0x0101 && m.subarray(8, 20).equals(req.subarray(8, 20))) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      s.send(req, port, '127.0.0.1');
    });
  } finally {
    s.close();
  }
}

export async function startTurn(opts: { user?: string; password?: string } = {}): Promise<TurnServer> {
  const user = opts.user ?? 'tutti';
  const password = opts.password ?? 'tutti-test-secret';
  const port = await freeUdpPort();
  const dir = mkdtempSync(join(tmpdir(), 'tutti-turn-'));
  const logFile = join(dir, 'turn.log');
  const args = [
    '-n', // no configuration file
    '--listening-ip=127.0.0.1',
    '--relay-ip=127.0.0.1',
    `--listening-port=${port}`,
    '--min-port=40000',
    '--max-port=49999',
    '--lt-cred-mech',
    `--user=${user}:${password}`,
    '--realm=tutti.test',
    '--fingerprint',
    '--no-tls',
    '--no-dtls',
    '--no-tcp',
    '--no-cli',
    '--allow-loopback-peers',
    '--no-stdout-log',
    `--log-file=${logFile}`,
    '--simple-log',
    `--pidfile=${join(dir, 'turn.pid')}`,
  ];
  const child: ChildProcess = spawn(TURN_BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const log = (): string => {
    try {
      return readFileSync(logFile, 'utf8') + stderr;
    } catch {
      return stderr;
    }
  };
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (let i = 0; i < 50; i++) {
    if (child.exitCode !== null) break;
    if (await stunPing(port)) {
      return {
        port,
        user,
        password,
        log,
        async close() {
          if (child.exitCode === null) child.kill('SIGTERM');
          await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
          if (child.exitCode === null) child.kill('SIGKILL');
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
  }
  child.kill('SIGKILL');
  throw new Error(`turnserver did not answer STUN on 127.0.0.1:${port}:\n${log().slice(-2000)}`);
}
