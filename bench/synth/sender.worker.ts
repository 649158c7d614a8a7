/// <reference lib="webworker" />
// Synthetic sender worker (P4 scale): owns the DataChannels of every synthetic peer and sends each
// one valid wire-format packets at 375/s, paced by the wall clock like a capture worklet (the
// capture timestamp is when the quantum was due, so the receiver's latency figure stays honest).

import { QUANTUM_FRAMES, QUANTUM_MS, QUANTUM_SAMPLES, SAMPLE_RATE } from '../../src/shared/constants.ts';
import { HEADER, MAX_PACKET_BYTES, encodePacket } from '../../src/shared/wire.ts';
import type { FromSender, SenderStats, ToSender } from './synth-protocol.ts';

declare const self: DedicatedWorkerGlobalScope;

/** Same congestion rule as Tutti's network worker. */
const MAX_BUFFERED_BYTES = 32 * 1024;
/** If the timer falls this many quanta behind, skip ahead instead of bursting them all. */
const MAX_BACKLOG = 64;

interface Synthetic {
  channel: RTCDataChannel;
  streamId: number;
  seq: number;
}

const peers: Synthetic[] = [];
const stats: SenderStats = { peers: 0, sent: 0, congested: 0, skipped: 0 };
const frame = new Float32Array(QUANTUM_SAMPLES);
const packet = new Uint8Array(MAX_PACKET_BYTES);
const view = new DataView(packet.buffer);
const t0 = performance.now();
let k = 0;

function post(m: FromSender): void {
  self.postMessage(m);
}

function tick(): void {
  const due = Math.floor((performance.now() - t0) / QUANTUM_MS);
  if (due - k > MAX_BACKLOG) {
    stats.skipped += due - MAX_BACKLOG - k;
    k = due - MAX_BACKLOG;
  }
  for (; k < due; k++) {
    for (let f = 0; f < QUANTUM_FRAMES; f++) {
      const x = 0.02 * Math.sin((2 * Math.PI * 440 * (k * QUANTUM_FRAMES + f)) / SAMPLE_RATE);
      frame[2 * f] = x;
      frame[2 * f + 1] = x;
    }
    const captureUs = Math.round((performance.timeOrigin + t0 + k * QUANTUM_MS) * 1000);
    const len = encodePacket(packet, view, frame, 2, 0, 0, captureUs);
    const bytes = packet.subarray(0, len);
    for (const p of peers) {
      if (p.channel.readyState !== 'open') continue;
      packet[HEADER.STREAM_ID] = p.streamId;
      view.setUint32(HEADER.SEQUENCE, p.seq, true);
      p.seq = (p.seq + 1) >>> 0;
      if (p.channel.bufferedAmount > MAX_BUFFERED_BYTES) {
        stats.congested++;
        continue;
      }
      p.channel.send(bytes);
      stats.sent++;
    }
  }
}

setInterval(tick, 2);
setInterval(() => post({ type: 'stats', stats: { ...stats, peers: peers.length } }), 100);

self.onmessage = (ev: MessageEvent<ToSender>) => {
  const m = ev.data;
  if (m.type !== 'add') return;
  const p: Synthetic = { channel: m.channel, streamId: 1 + Math.floor(Math.random() * 255), seq: (Math.random() * 2 ** 32) >>> 0 };
  m.channel.binaryType = 'arraybuffer';
  m.channel.onmessage = null; // the receiver's own stream to us is not measured
  if (m.channel.readyState === 'open') post({ type: 'open', id: m.id });
  else m.channel.onopen = () => post({ type: 'open', id: m.id });
  peers.push(p);
};
