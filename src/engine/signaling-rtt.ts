// Round trip to the signaling server (main thread): y-webrtc `{"type":"ping"}` answered by
// `{"type":"pong"}` on a WebSocket of its own, timed several times, one at a time.

import { median } from '../shared/median.ts';

export interface SignalingRtt {
  medianMs: number;
  samplesMs: number[];
}

/** Open `url`, time `count` ping→pong exchanges, close. Rejects with a clear message on failure or after `timeoutMs`. */
export function measureSignalingRtt(url: string, count = 5, timeoutMs = 5000): Promise<SignalingRtt> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const samplesMs: number[] = [];
    let sentAt = 0;
    const timer = setTimeout(() => finish(new Error(`no answer from the signaling server at ${url} within ${timeoutMs / 1000} s`)), timeoutMs);
    const finish = (err?: Error): void => {
      clearTimeout(timer);
      ws.onopen = ws.onmessage = ws.onerror = ws.onclose = null;
      ws.close();
      if (err) reject(err);
      else resolve({ medianMs: median(samplesMs), samplesMs });
    };
    const ping = (): void => {
      sentAt = performance.now();
      ws.send(JSON.stringify({ type: 'ping' }));
    };
    ws.onopen = ping;
    ws.onmessage = (ev: MessageEvent) => {
      let msg: unknown;
      try {
        msg = JSON.parse(String(ev.data));
      } catch {
        return;
      }
      if ((msg as { type?: unknown } | null)?.type !== 'pong') return;
      samplesMs.push(performance.now() - sentAt);
      if (samplesMs.length >= count) finish();
      else ping();
    };
    ws.onerror = () => finish(new Error(`could not reach the signaling server at ${url}`));
    ws.onclose = () => finish(new Error(`the signaling server at ${url} closed the connection`));
  });
}
