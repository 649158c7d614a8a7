// Page-level resource accounting for leak tests, installed before any page script runs: every
// RTCPeerConnection the page creates (kept, to check it was closed), live intervals, pending
// timeouts and animation frames, and live event listeners on non-DOM targets (window, workers,
// sockets, ports, audio objects…) plus document. Targets are held weakly; call readLeaks after a
// forced GC (Chromium launched with --js-flags=--expose-gc) so only reachable objects count.

import type { Page } from '@playwright/test';

export interface LeakSnapshot {
  /** RTCPeerConnections constructed since the page loaded. */
  pcCreated: number;
  /** connectionState of each of them, in creation order. */
  pcStates: string[];
  /** setInterval timers not cleared. */
  intervals: number;
  /** setTimeout callbacks neither run nor cleared. */
  timeouts: number;
  /** requestAnimationFrame callbacks neither run nor cancelled (a leaked render loop keeps one). */
  animationFrames: number;
  /** Live listeners by target class (document and every non-Node EventTarget still reachable). */
  listeners: Record<string, number>;
  /** Whether gc() was available for this snapshot. */
  gc: boolean;
}

/** As plain JavaScript source (passed as a string so no transpiler helper leaks into the page). */
export const LEAK_SCRIPT = `(() => {
  const pcs = [];
  const Orig = globalThis.RTCPeerConnection;
  if (Orig) {
    const Counted = function RTCPeerConnection(...args) {
      const pc = new Orig(...args);
      pcs.push(pc);
      return pc;
    };
    Counted.prototype = Orig.prototype;
    Object.setPrototypeOf(Counted, Orig);
    globalThis.RTCPeerConnection = Counted;
  }
  const intervals = new Set(), timeouts = new Set(), frames = new Set();
  const si = globalThis.setInterval, ci = globalThis.clearInterval, st = globalThis.setTimeout, ct = globalThis.clearTimeout;
  const raf = globalThis.requestAnimationFrame, caf = globalThis.cancelAnimationFrame;
  globalThis.setInterval = function (fn, ms, ...a) { const id = si.call(globalThis, fn, ms, ...a); intervals.add(id); return id; };
  globalThis.clearInterval = function (id) { intervals.delete(id); return ci.call(globalThis, id); };
  globalThis.setTimeout = function (fn, ms, ...a) {
    let id;
    const run = typeof fn === 'function' ? function (...b) { timeouts.delete(id); return fn.apply(this, b); } : fn;
    id = st.call(globalThis, run, ms, ...a);
    timeouts.add(id);
    return id;
  };
  globalThis.clearTimeout = function (id) { timeouts.delete(id); return ct.call(globalThis, id); };
  globalThis.requestAnimationFrame = function (fn) {
    let id;
    id = raf.call(globalThis, (t) => { frames.delete(id); fn(t); });
    frames.add(id);
    return id;
  };
  globalThis.cancelAnimationFrame = function (id) { frames.delete(id); return caf.call(globalThis, id); };

  // target (weakly) -> Map(type|capture -> Set(listener))
  const reg = new WeakMap();
  const targets = new Set();
  const key = (type, opts) => type + '|' + (typeof opts === 'boolean' ? opts : !!(opts && opts.capture));
  const counted = (t) => t === document || !(t instanceof Node);
  const add = EventTarget.prototype.addEventListener, rem = EventTarget.prototype.removeEventListener;
  EventTarget.prototype.addEventListener = function (type, fn, opts) {
    if (fn && counted(this) && !(opts && typeof opts === 'object' && opts.once)) {
      let m = reg.get(this);
      if (!m) { m = new Map(); reg.set(this, m); targets.add(new WeakRef(this)); }
      const k = key(type, opts);
      if (!m.has(k)) m.set(k, new Set());
      m.get(k).add(fn);
    }
    return add.call(this, type, fn, opts);
  };
  EventTarget.prototype.removeEventListener = function (type, fn, opts) {
    const m = reg.get(this);
    if (m) { const s = m.get(key(type, opts)); if (s) s.delete(fn); }
    return rem.call(this, type, fn, opts);
  };
  // The selected ICE candidate pair of every connection not closed (for the TURN test).
  globalThis.__tuttiSelectedPairs = async () => {
    const out = [];
    for (const pc of pcs) {
      if (pc.connectionState === 'closed') continue;
      const stats = await pc.getStats();
      let pair = null;
      stats.forEach((s) => { if (s.type === 'transport' && s.selectedCandidatePairId) pair = stats.get(s.selectedCandidatePairId) || pair; });
      let messagesSent = 0, messagesReceived = 0;
      stats.forEach((s) => { if (s.type === 'data-channel') { messagesSent += s.messagesSent || 0; messagesReceived += s.messagesReceived || 0; } });
      const local = pair ? stats.get(pair.localCandidateId) : null;
      const remote = pair ? stats.get(pair.remoteCandidateId) : null;
      out.push({
        connectionState: pc.connectionState,
        local: local ? local.candidateType : null,
        remote: remote ? remote.candidateType : null,
        localAddress: local ? local.address + ':' + local.port : null,
        remoteAddress: remote ? remote.address + ':' + remote.port : null,
        relayProtocol: local && local.relayProtocol ? local.relayProtocol : null,
        packetsSent: pair ? pair.packetsSent : null,
        packetsReceived: pair ? pair.packetsReceived : null,
        messagesSent,
        messagesReceived,
      });
    }
    return out;
  };
  globalThis.__tuttiLeaks = () => {
    const listeners = {};
    for (const ref of [...targets]) {
      const t = ref.deref();
      if (!t) { targets.delete(ref); continue; }
      let n = 0;
      for (const s of reg.get(t).values()) n += s.size;
      if (n === 0) continue;
      const name = t === globalThis ? 'Window' : t === document ? 'Document' : (t.constructor && t.constructor.name) || 'EventTarget';
      listeners[name] = (listeners[name] || 0) + n;
    }
    return {
      pcCreated: pcs.length,
      pcStates: pcs.map((p) => p.connectionState),
      intervals: intervals.size,
      timeouts: timeouts.size,
      animationFrames: frames.size,
      listeners,
      gc: typeof globalThis.gc === 'function',
    };
  };
})();`;

export interface SelectedPair {
  connectionState: string;
  /** candidateType of the local and remote candidate of the selected pair ('host', 'srflx', 'relay'…). */
  local: string | null;
  remote: string | null;
  localAddress: string | null;
  remoteAddress: string | null;
  relayProtocol: string | null;
  packetsSent: number | null;
  packetsReceived: number | null;
  /** Summed over the connection's data channels (the audio channel is transferred to the worker). */
  messagesSent: number;
  messagesReceived: number;
}

/** The selected candidate pair of each open RTCPeerConnection (needs installLeakCounters). */
export function selectedPairs(page: Page): Promise<SelectedPair[]> {
  return page.evaluate('globalThis.__tuttiSelectedPairs()') as Promise<SelectedPair[]>;
}

/** Chromium flag that makes gc() available to the page, so leak snapshots count reachable objects only. */
export const EXPOSE_GC = '--js-flags=--expose-gc';

export async function installLeakCounters(page: Page): Promise<void> {
  await page.addInitScript({ content: LEAK_SCRIPT });
}

/** Snapshot after two forced collections (when gc() is exposed). */
export async function readLeaks(page: Page): Promise<LeakSnapshot> {
  for (let i = 0; i < 2; i++) {
    await page.evaluate(() => (globalThis as unknown as { gc?: () => void }).gc?.());
    await page.waitForTimeout(50); // WeakRefs clear only after the job that ran gc() ends
  }
  return page.evaluate(() => (globalThis as unknown as { __tuttiLeaks(): LeakSnapshot }).__tuttiLeaks());
}
