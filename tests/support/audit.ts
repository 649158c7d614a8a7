// Main-thread audit, installed before any page script runs: every MessageEvent whose `data` the
// page reads passes through this getter, so it sees each message the main thread handles — from
// workers, worklet ports, WebSockets and DataChannels alike — and records what it carried.

import type { Page } from '@playwright/test';

export interface MainThreadAudit {
  /** MessageEvents whose data the page read. */
  events: number;
  /** Of those, events from an RTCDataChannel (must be 0: the worker owns every audio channel). */
  dataChannelEvents: number;
  /** Events whose payload held binary data (ArrayBuffer, typed array, Blob) at any depth ≤ 3. */
  binaryEvents: number;
  binaryBytes: number;
  /** Event counts by the payload's `type` field (or by `typeof` for non-objects). */
  byType: Record<string, number>;
}

export async function installAudit(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const audit = { events: 0, dataChannelEvents: 0, binaryEvents: 0, binaryBytes: 0, byType: {} as Record<string, number> };
    (globalThis as unknown as { __mainThreadAudit: typeof audit }).__mainThreadAudit = audit;
    const desc = Object.getOwnPropertyDescriptor(MessageEvent.prototype, 'data')!;
    const seen = new WeakSet<object>();
    const binaryBytes = (v: unknown, depth: number): number => {
      if (v instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && v instanceof SharedArrayBuffer)) return v.byteLength;
      if (ArrayBuffer.isView(v)) return v.byteLength;
      if (v instanceof Blob) return v.size;
      if (depth <= 0 || typeof v !== 'object' || v === null) return 0;
      let n = 0;
      for (const k of Object.keys(v)) n += binaryBytes((v as Record<string, unknown>)[k], depth - 1);
      return n;
    };
    Object.defineProperty(MessageEvent.prototype, 'data', {
      configurable: true,
      get(this: MessageEvent) {
        const data: unknown = desc.get!.call(this);
        if (!seen.has(this)) {
          seen.add(this);
          audit.events++;
          if (typeof RTCDataChannel !== 'undefined' && this.target instanceof RTCDataChannel) audit.dataChannelEvents++;
          const bytes = binaryBytes(data, 3);
          // The worker's init-time SharedArrayBuffers are never sent to the page; any binary is a finding.
          if (bytes > 0) {
            audit.binaryEvents++;
            audit.binaryBytes += bytes;
          }
          const t = typeof data === 'object' && data !== null && typeof (data as { type?: unknown }).type === 'string' ? (data as { type: string }).type : typeof data;
          audit.byType[t] = (audit.byType[t] ?? 0) + 1;
        }
        return data;
      },
    });
  });
}

export function readAudit(page: Page): Promise<MainThreadAudit> {
  return page.evaluate(() => (globalThis as unknown as { __mainThreadAudit: MainThreadAudit }).__mainThreadAudit);
}
