// Page (main thread): registers the service worker (workers/sw/sw.ts, built as /sw.js) with
// workbox-window and tracks what the update prompt needs to show: a new version waiting, or a
// first visit from a host without isolation headers that becomes cross-origin isolated after one
// reload (the service worker adds COOP/COEP only to responses it serves itself).

import { Workbox } from 'workbox-window';
import type { ToServiceWorker, VersionReply } from '../shared/sw-protocol.ts';

export type PwaState = 'idle' | 'update-ready' | 'reload-for-isolation' | 'unsupported';

export class PwaController extends EventTarget {
  state: PwaState = 'idle';
  private wb: Workbox | null = null;
  private updating = false;

  /** Register `scriptUrl`. Failure (no secure context, untrusted certificate) is logged, not thrown. */
  async start(scriptUrl: string): Promise<void> {
    if (!('serviceWorker' in navigator)) {
      this.set('unsupported');
      return;
    }
    const wb = new Workbox(scriptUrl, { scope: '/' });
    this.wb = wb;
    wb.addEventListener('waiting', () => this.set('update-ready'));
    wb.addEventListener('controlling', () => {
      // After "Update now" the new version controls the page: load it. A first install controls
      // the page too (clients.claim) but this document keeps the headers it was loaded with.
      if (this.updating) location.reload();
      else if (!crossOriginIsolated) this.set('reload-for-isolation');
    });
    try {
      const reg = await wb.register();
      // Active but not controlling (e.g. after a hard reload, which bypasses the service worker).
      if (reg?.active && !crossOriginIsolated && this.state === 'idle') this.set('reload-for-isolation');
    } catch (err) {
      console.warn(`Tutti: service worker not registered (offline use and install unavailable): ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Ask the waiting version to take over; the page reloads when it controls. */
  applyUpdate(): void {
    if (!this.wb) return;
    this.updating = true;
    this.wb.messageSkipWaiting();
  }

  /** The controlling service worker's cache version and precache list (null when none controls). */
  async version(): Promise<VersionReply | null> {
    const sw = navigator.serviceWorker?.controller;
    if (!sw) return null;
    const channel = new MessageChannel();
    const reply = new Promise<VersionReply>((resolve) => (channel.port1.onmessage = (e: MessageEvent<VersionReply>) => resolve(e.data)));
    const msg: ToServiceWorker = { type: 'GET_VERSION' };
    sw.postMessage(msg, [channel.port2]);
    return reply;
  }

  dismiss(): void {
    this.set('idle');
  }

  private set(state: PwaState): void {
    this.state = state;
    this.dispatchEvent(new Event('change'));
  }
}

/** The page's one controller; main.ts starts it in production builds. */
export const pwa = new PwaController();
