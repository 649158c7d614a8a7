// The kernel's own record of datagrams it threw away because a receiving socket's buffer was
// full (/proc/net/snmp `Udp: RcvbufErrors`, /proc/net/snmp6 `Udp6RcvbufErrors`; the browsers'
// WebRTC sockets on loopback use IPv6). A browser process that stalls on a busy machine stops
// reading its socket, and what arrives meanwhile is lost before any of our code sees it: the
// outside truth against which an end-to-end test tells such a loss from one of ours.

import { readFileSync } from 'node:fs';

function counter(file: string, pick: (text: string) => number | null): number {
  try {
    return pick(readFileSync(file, 'utf8')) ?? 0;
  } catch {
    return 0; // no such file: no IPv6, or not Linux (the tests run on Linux)
  }
}

/** UDP datagrams dropped at a full receive buffer since boot, IPv4 and IPv6 together. */
export function udpReceiveDrops(): number {
  const v4 = counter('/proc/net/snmp', (text) => {
    const lines = text.split('\n').filter((l) => l.startsWith('Udp: '));
    if (lines.length < 2) return null;
    const names = lines[0]!.split(/\s+/);
    const values = lines[1]!.split(/\s+/);
    const i = names.indexOf('RcvbufErrors');
    return i < 0 ? null : Number(values[i]);
  });
  const v6 = counter('/proc/net/snmp6', (text) => {
    const m = /^Udp6RcvbufErrors\s+(\d+)/m.exec(text);
    return m ? Number(m[1]) : null;
  });
  return v4 + v6;
}
