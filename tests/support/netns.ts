// A Linux network namespace joined to the root namespace by a veth pair, with an nftables table
// inside it that drops a set percentage of the UDP datagrams leaving it (random, per packet) and
// counts what it passed and dropped. A browser runs inside it through a wrapper executable
// (`ip netns exec <ns> chromium …`). Node side of the network-fault tests; needs root, iproute2
// and nftables (Debian: `apt-get install -y nftables`).

import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM } from './browsers.ts';

const TABLE = 'tutti_faults';

function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function which(cmd: string): string | null {
  for (const dir of ['/usr/sbin', '/sbin', '/usr/bin', '/bin', '/usr/local/sbin', '/usr/local/bin']) {
    if (existsSync(join(dir, cmd))) return join(dir, cmd);
  }
  return null;
}

export interface UdpCounters {
  /** UDP datagrams that left the namespace (passed the drop rule). */
  passed: number;
  /** UDP datagrams the random rule dropped. */
  dropped: number;
}

export interface Netns {
  name: string;
  /** Address of the root-namespace end of the veth pair (the app server binds here). */
  hostIp: string;
  /** Address of the namespace end. */
  nsIp: string;
  /** An executable that runs Chromium inside the namespace (pass as launchPeer's executablePath). */
  chromium: string;
  /** Drop `percent` % of the UDP datagrams leaving the namespace (0 removes the drop). */
  setUdpLoss(percent: number): void;
  counters(): UdpCounters;
  close(): void;
}

/** Why namespaces with nftables cannot be used here, or null when they can (checked by trying). */
export function netnsUnavailable(): string | null {
  if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'creating network namespaces and nftables rules needs root';
  if (!which('ip')) return "iproute2's `ip` is not installed";
  if (!which('nft')) return '`nft` is not installed (apt-get install -y nftables)';
  const probe = `tutti-probe-${process.pid}`;
  try {
    run('ip', ['netns', 'add', probe]);
    run('ip', ['netns', 'exec', probe, 'nft', 'add', 'table', 'inet', TABLE]);
    run('ip', ['netns', 'exec', probe, 'nft', 'add', 'chain', 'inet', TABLE, 'out', '{ type filter hook output priority 0; policy accept; }']);
    run('ip', ['netns', 'exec', probe, 'nft', 'add', 'rule', 'inet', TABLE, 'out', 'meta', 'l4proto', 'udp', 'numgen', 'random', 'mod', '100', '<', '5', 'drop']);
    return null;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    return `network namespace or nftables probe failed: ${(e.stderr || e.message).trim()}`;
  } finally {
    try {
      run('ip', ['netns', 'del', probe]);
    } catch {
      // never created
    }
  }
}

/** Create namespace `tutti-<pid>`: veth 10.X.Y.1 (root) <-> 10.X.Y.2 (namespace), lo up, no loss. */
export function createNetns(): Netns {
  const id = process.pid % 60000;
  const name = `tutti-${process.pid}`;
  const hostIf = `tv${id}h`;
  const nsIf = `tv${id}n`;
  const net = `10.${200 + (id % 50)}.${(id >> 6) & 0xff}`;
  const hostIp = `${net}.1`;
  const nsIp = `${net}.2`;
  const ns = (...args: string[]): string => run('ip', ['netns', 'exec', name, ...args]);
  try {
    run('ip', ['netns', 'del', name]);
  } catch {
    // not left over from an earlier run
  }
  run('ip', ['netns', 'add', name]);
  run('ip', ['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf]);
  run('ip', ['link', 'set', nsIf, 'netns', name]);
  run('ip', ['addr', 'add', `${hostIp}/30`, 'dev', hostIf]);
  run('ip', ['link', 'set', hostIf, 'up']);
  ns('ip', 'addr', 'add', `${nsIp}/30`, 'dev', nsIf);
  ns('ip', 'link', 'set', nsIf, 'up');
  ns('ip', 'link', 'set', 'lo', 'up');
  ns('nft', 'add', 'table', 'inet', TABLE);
  ns('nft', 'add', 'counter', 'inet', TABLE, 'udp_passed');
  ns('nft', 'add', 'counter', 'inet', TABLE, 'udp_dropped');
  ns('nft', 'add', 'chain', 'inet', TABLE, 'out', '{ type filter hook output priority 0; policy accept; }');

  const dir = mkdtempSync(join(tmpdir(), 'tutti-netns-'));
  const chromium = join(dir, 'chromium-in-netns');
  writeFileSync(chromium, `#!/bin/sh\nexec ip netns exec ${name} ${CHROMIUM} "$@"\n`);
  chmodSync(chromium, 0o755);

  const readCounter = (c: string): number => {
    const m = /packets (\d+)/.exec(ns('nft', 'list', 'counter', 'inet', TABLE, c));
    if (!m) throw new Error(`cannot read nft counter ${c}`);
    return Number(m[1]);
  };

  return {
    name,
    hostIp,
    nsIp,
    chromium,
    setUdpLoss(percent: number) {
      if (!(percent >= 0 && percent <= 100)) throw new Error(`loss must be 0..100 %, got ${percent}`);
      ns('nft', 'flush', 'chain', 'inet', TABLE, 'out');
      if (percent > 0) {
        ns('nft', 'add', 'rule', 'inet', TABLE, 'out', 'meta', 'l4proto', 'udp', 'numgen', 'random', 'mod', '100', '<', String(Math.round(percent)), 'counter', 'name', 'udp_dropped', 'drop');
      }
      ns('nft', 'add', 'rule', 'inet', TABLE, 'out', 'meta', 'l4proto', 'udp', 'counter', 'name', 'udp_passed');
    },
    counters() {
      return { passed: readCounter('udp_passed'), dropped: readCounter('udp_dropped') };
    },
    close() {
      try {
        run('ip', ['netns', 'del', name]); // takes the veth pair with it
      } catch {
        // already gone
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
