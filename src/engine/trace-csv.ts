// The arrival trace as CSV (main thread): one row per received frame, in the order the worker
// recorded the arrivals. Columns: peer,seq,arrival_ms,capture_ms (docs/MEASUREMENT.md).

import type { TraceMessage } from '../shared/worker-protocol.ts';

export const TRACE_CSV_HEADER = 'peer,seq,arrival_ms,capture_ms';

export function traceToCsv(t: TraceMessage): string {
  const n = t.seq.length;
  if (t.peer.length !== n || t.arrivalMs.length !== n || t.captureMs.length !== n) {
    throw new Error(`malformed trace: column lengths differ (peer ${t.peer.length}, seq ${n}, arrival ${t.arrivalMs.length}, capture ${t.captureMs.length})`);
  }
  const names = t.peers.map(csvField);
  const lines = [TRACE_CSV_HEADER];
  for (let i = 0; i < n; i++) {
    const name = names[t.peer[i]!];
    if (name === undefined) throw new Error(`malformed trace: row ${i} names peer index ${t.peer[i]} of ${t.peers.length}`);
    lines.push(`${name},${t.seq[i]},${t.arrivalMs[i]!.toFixed(3)},${t.captureMs[i]!.toFixed(3)}`);
  }
  return lines.join('\n') + '\n';
}

/** RFC 4180 quoting for a field that holds a comma, quote or line break. */
function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
