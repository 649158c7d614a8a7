// Main-thread audit, installed before any page script runs: every MessageEvent whose `data` the
// page reads passes through this getter, so it sees each message the main thread handles — from
// workers, worklet ports, WebSockets and DataChannels alike — and records what it carried. The
// room's Yjs channels (label 'tutti-room') are tallied separately: they carry the document.

import type { Page } from '@playwright/test';

export interface MainThreadAudit {
  /** MessageEvents whose data the page read. */
  events: number;
  /** Of those, events from an RTCDataChannel (must be 0: the worker owns every audio channel). */
  dataChannelEvents: number;
  /** Events from y-webrtc's room channels (label 'tutti-room': Yjs sync and awareness, never audio). Not counted above. */
  roomChannelEvents: number;
  /** Events whose payload held binary data (ArrayBuffer, typed array, Blob) at any depth ≤ 3. */
  binaryEvents: number;
  binaryBytes: number;
  /** Event counts by the payload's `type` field (or by `typeof` for non-objects). */
  byType: Record<string, number>;
}

/**
 * The audit as plain JavaScript source: passed to addInitScript as a string so no transpiler
 * helper (e.g. tsx's __name) leaks into the page.
 */
const AUDIT_SCRIPT = `(() => {
  const audit = { events: 0, roomChannelEvents: 0, dataChannelEvents: 0, binaryEvents: 0, binaryBytes: 0, byType: {} };
  globalThis.__mainThreadAudit = audit;
  const desc = Object.getOwnPropertyDescriptor(MessageEvent.prototype, 'data');
  const seen = new WeakSet();
  const binaryBytes = (v, depth) => {
    if (v instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && v instanceof SharedArrayBuffer)) return v.byteLength;
    if (ArrayBuffer.isView(v)) return v.byteLength;
    if (v instanceof Blob) return v.size;
    if (depth <= 0 || typeof v !== 'object' || v === null) return 0;
    let n = 0;
    for (const k of Object.keys(v)) n += binaryBytes(v[k], depth - 1);
    return n;
  };
  Object.defineProperty(MessageEvent.prototype, 'data', {
    configurable: true,
    get() {
      const data = desc.get.call(this);
      if (!seen.has(this)) {
        seen.add(this);
        // The room's own Yjs channels carry the shared document, not audio: counted apart. Every
        // other channel (the audio one, 'tutti-audio', lives in the worker) still counts below.
        if (typeof RTCDataChannel !== 'undefined' && this.target instanceof RTCDataChannel && this.target.label === 'tutti-room') {
          audit.roomChannelEvents++;
          return data;
        }
        audit.events++;
        if (typeof RTCDataChannel !== 'undefined' && this.target instanceof RTCDataChannel) audit.dataChannelEvents++;
        // Any binary payload is a finding: the page is never sent audio, nor shared memory.
        const bytes = binaryBytes(data, 3);
        if (bytes > 0) { audit.binaryEvents++; audit.binaryBytes += bytes; }
        const t = typeof data === 'object' && data !== null && typeof data.type === 'string' ? data.type : typeof data;
        audit.byType[t] = (audit.byType[t] || 0) + 1;
      }
      return data;
    },
  });
})();`;

export async function installAudit(page: Page): Promise<void> {
  await page.addInitScript({ content: AUDIT_SCRIPT });
}

export function readAudit(page: Page): Promise<MainThreadAudit> {
  return page.evaluate(() => (globalThis as unknown as { __mainThreadAudit: MainThreadAudit }).__mainThreadAudit);
}
