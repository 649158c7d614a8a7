// `npx tsx bench/room-cpu.ts [peers] [seconds] [rounds] [perPacket]`: what a room costs the machine. Starts
// the app server (the production build in dist/: run `npx vite build` first), puts `peers`
// headless browsers (one process each, default 3) in one room with their fake microphones, waits
// for the links to settle, then over `seconds` (default 10) reads, from /proc:
//   - every Chromium thread's CPU time, summed per process kind and thread name (% of one core);
//   - the kernel's CPU pressure (/proc/pressure/cpu "some": the share of the time at least one
//     runnable thread waited for a core), which, unlike idle time, still tells how far demand is
//     over what the machine has once it has no idle time left;
//   - UDP datagrams the kernel dropped at a full receive buffer;
// and, from each browser's stats, what the listeners got: underruns, lost and late frames, frames
// the senders dropped as congested, whether a link was stepped down to mono, and the gaps each
// browser's speaker played (its output device's dropouts: AudioContext.playbackStats). Rounds are printed
// one by one and as medians. Three browsers on a two-core machine is three times what one player's
// computer carries in a three-person room; it is how the browser suite runs its three-person tests.
// Run nothing else meanwhile (flock /tmp/tutti-browser.lock).

import { readFileSync, readdirSync } from 'node:fs';
import { cpuTimes, stealPercent } from '../scripts/host-steal.ts';
import { median } from '../src/shared/median.ts';
import { joinRoom, launchPeer, type PeerBrowser } from '../tests/support/browsers.ts';
import { udpReceiveDrops } from '../tests/support/kernel-drops.ts';
import { startServer } from '../tests/support/server.ts';
import { stats, waitForPeers } from '../tests/support/stats.ts';

const peersWanted = Number(process.argv[2] ?? 3);
const seconds = Number(process.argv[3] ?? 10);
const rounds = Number(process.argv[4] ?? 1);
/** Quanta per packet every browser picks in its room view (1, the default, or 2). */
const perPacket = process.argv[5] === '2' ? '2' : '1';
const SETTLE_MS = 8000;
/** Clock ticks a second for /proc/<pid>/task/<tid>/stat (USER_HZ on Linux). */
const HZ = 100;

interface ThreadTime { kind: string; name: string; ticks: number }

/** Every Chromium thread's CPU time so far, keyed by pid/tid. */
function chromiumThreads(): Map<string, ThreadTime> {
  const out = new Map<string, ThreadTime>();
  for (const pid of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmd.includes('chromium')) continue;
    const type = /--type=([a-z-]+)/.exec(cmd)?.[1] ?? 'browser';
    const sub = /--utility-sub-type=(?:\w+\.)*(\w+)/.exec(cmd)?.[1];
    const kind = sub ? `${type}:${sub}` : type;
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const s = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'));
        const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
        out.set(`${pid}/${tid}`, { kind, name, ticks: Number(f[11]) + Number(f[12]) });
      } catch {
        // the thread ended meanwhile
      }
    }
  }
  return out;
}

function cpuPressureUs(): number {
  return Number(/some .*total=(\d+)/.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1] ?? NaN);
}

interface Round {
  pressure: number;
  idle: number;
  steal: number;
  kernelDrops: number;
  byThread: Record<string, number>;
  underruns: number;
  lost: number;
  late: number;
  sendDropped: number;
  monoLinks: number;
  /** The browsers' speakers' dropouts (StatsMessage.output), all together. */
  dropouts: number;
}

async function round(peers: PeerBrowser[]): Promise<Round> {
  const before = await Promise.all(peers.map((p) => stats(p.page)));
  const t0 = chromiumThreads();
  const m0 = cpuTimes();
  const p0 = cpuPressureUs();
  const k0 = udpReceiveDrops();
  const w0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const wallUs = (performance.now() - w0) * 1000;
  const pressure = (100 * (cpuPressureUs() - p0)) / wallUs;
  const kernelDrops = udpReceiveDrops() - k0;
  const m1 = cpuTimes();
  const t1 = chromiumThreads();
  const after = await Promise.all(peers.map((p) => stats(p.page)));
  if (!m0 || !m1) throw new Error('room-cpu: /proc/stat is not readable here (Linux only)');
  const byThread: Record<string, number> = {};
  for (const [key, t] of t1) {
    const key2 = `${t.kind} / ${t.name}`;
    byThread[key2] = (byThread[key2] ?? 0) + (100 * (t.ticks - (t0.get(key)?.ticks ?? 0))) / HZ / seconds;
  }
  let underruns = 0, lost = 0, late = 0, sendDropped = 0, monoLinks = 0, dropouts = 0;
  after.forEach((s, i) => {
    dropouts += (s?.output?.events ?? 0) - (before[i]?.output?.events ?? 0);
    for (const q of s?.peers ?? []) {
      const o = before[i]?.peers.find((x) => x.peerId === q.peerId);
      if (!o) continue;
      underruns += q.underruns - o.underruns;
      lost += q.lost - o.lost;
      late += q.late - o.late;
      sendDropped += q.sendDropped - o.sendDropped;
      if (q.sendMono) monoLinks++;
    }
  });
  return { pressure, idle: (100 * (m1.idle - m0.idle)) / (m1.total - m0.total), steal: stealPercent(m0, m1), kernelDrops, byThread, underruns, lost, late, sendDropped, monoLinks, dropouts };
}

const fmt = (x: number) => x.toFixed(1).padStart(6);

const server = await startServer({ build: 'production' });
const peers: PeerBrowser[] = [];
try {
  for (let i = 0; i < peersWanted; i++) peers.push(await launchPeer());
  for (let i = 0; i < peersWanted; i++) await joinRoom(peers[i]!.page, server.url, 'cpu', `P${i + 1}`);
  if (perPacket === '2') for (const p of peers) await p.page.locator('select[name=per-packet]').selectOption('2');
  for (const p of peers) await waitForPeers(p.page, peersWanted - 1);
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const results: Round[] = [];
  for (let r = 0; r < rounds; r++) {
    const x = await round(peers);
    results.push(x);
    console.log(`round ${r + 1}: CPU pressure ${x.pressure.toFixed(1)} %, idle ${x.idle.toFixed(1)} %, steal ${x.steal.toFixed(1)} %; over ${seconds} s, all links together: ${x.underruns} underruns, ${x.lost} lost, ${x.late} late, ${x.sendDropped} dropped by senders as congested, ${x.kernelDrops} UDP datagrams dropped by the kernel; ${x.monoLinks} links stepped down to mono; the speakers played ${x.dropouts} dropouts`);
  }
  console.log(`\n${peersWanted} browsers in one room at ${perPacket} quant${perPacket === '2' ? 'a' : 'um'} per packet, ${rounds} round(s) of ${seconds} s, medians: CPU pressure ${median(results.map((x) => x.pressure)).toFixed(1)} %, idle ${median(results.map((x) => x.idle)).toFixed(1)} %, underruns ${median(results.map((x) => x.underruns))}, sender drops ${median(results.map((x) => x.sendDropped))}, speaker dropouts ${median(results.map((x) => x.dropouts))}`);
  console.log('\n  % of one core (median of rounds), all browsers together, by process kind / thread');
  const keys = Object.keys(results[0]!.byThread);
  const rows = keys.map((k) => [k, median(results.map((x) => x.byThread[k] ?? 0))] as const).filter(([, v]) => v >= 0.5).sort((a, b) => b[1] - a[1]);
  for (const [k, v] of rows) console.log(`${fmt(v)}  ${k}`);
} finally {
  for (const p of peers) await p.close().catch(() => {});
  await server.close();
}
