// The key the signaling hub counts a client under for its per-address limits (Node). IPv4 as is;
// IPv6 by its /64 prefix, since one home or one attacker usually holds a whole /64 and could
// otherwise open sockets from endless addresses; IPv4-mapped IPv6 (::ffff:a.b.c.d) as IPv4.

export function addressKey(remote: string | undefined): string {
  if (!remote) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(remote);
  if (mapped) return mapped[1]!;
  if (!remote.includes(':') || remote === '::1') return remote;
  const bare = remote.split('%')[0]!.toLowerCase(); // zone index (fe80::1%eth0) is not part of it
  const [head = '', tail] = bare.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => (parseInt(g, 16) || 0).toString(16)).join(':')}::/64`;
}
