// The page's side of the recorder worker (workers/recorder.worker.ts): owns the worker for the
// page's lifetime, starts and stops takes (handing the record ring to the network worker and the
// recorder, so no audio passes the main thread), keeps the list of takes and the live status for
// the views, and downloads a finished track from the Origin Private File System. The worker starts
// only when there is work: a take to record, or takes on this device to list and repair (a page
// that never records, a paired phone say, runs no recorder).

import { createRecordMemory } from '../shared/memory-layout.ts';
import type { FromRecorder, RecordingStatusMessage, TakeInfo, ToRecorder } from '../shared/recorder-protocol.ts';
import type { NetBridge } from './net-bridge.ts';

/** After the network worker stops pushing, the recorder drains the ring: give the stop that long to arrive. */
const STOP_GRACE_MS = 100;
/** The takes' folder in the Origin Private File System (workers/take-store.ts writes it). */
const TAKES_DIR = 'takes';

export class RecorderBridge extends EventTarget {
  /** Every take on this device, newest first. */
  takes: TakeInfo[] = [];
  /** The take being recorded, or null. */
  recording: string | null = null;
  /** The last status of the take being recorded. */
  status: RecordingStatusMessage | null = null;
  /** Something to tell the player (a take recovered, storage full, an error), or null. */
  notice: string | null = null;
  private worker: Worker | null = null;
  private net: NetBridge | null = null;

  constructor() {
    super();
    void this.lookForTakes();
  }

  /** Any take on this device: start the worker, which repairs what a crash left open and lists them. */
  private async lookForTakes(): Promise<void> {
    try {
      const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(TAKES_DIR);
      if ((await dir.keys().next()).done) return;
    } catch {
      return; // no takes folder: nothing was ever recorded here
    }
    this.post({ type: 'recover' });
  }

  /** Record our input from `net`'s capture into a new take named after `title` (the room). */
  start(net: NetBridge, title: string): void {
    if (this.recording) return;
    const memory = createRecordMemory();
    const id = `${new Date().toISOString().slice(0, 19).replace(/:/g, '-')}-${slug(title)}`;
    this.post({ type: 'start', id, title, input: memory });
    net.recordInput(memory);
    this.net = net;
    this.recording = id;
    this.status = null;
    this.notice = null;
    this.changed();
  }

  /** Stop the take: the network worker stops pushing first, then the recorder drains and closes. */
  async stop(): Promise<void> {
    if (!this.recording) return;
    this.net?.recordInput(null);
    this.net = null;
    await new Promise((r) => setTimeout(r, STOP_GRACE_MS));
    this.post({ type: 'stop' });
  }

  delete(id: string): void {
    this.post({ type: 'delete', id });
  }

  /** Save one track of a finished take as a download (read from the Origin Private File System). */
  async download(take: TakeInfo, track: TakeInfo['tracks'][number]): Promise<void> {
    const root = await navigator.storage.getDirectory();
    const dir = await (await root.getDirectoryHandle(TAKES_DIR)).getDirectoryHandle(take.id);
    const file = await (await dir.getFileHandle(track.file)).getFile();
    const url = URL.createObjectURL(file);
    const a = document.createElement('a');
    a.href = url;
    a.download = `${take.id}-${track.name}.wav`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }

  private onMessage(msg: FromRecorder): void {
    switch (msg.type) {
      case 'status':
        this.status = msg;
        break;
      case 'stopped':
        if (this.recording === msg.take.id) {
          this.recording = null;
          this.status = null;
          this.net?.recordInput(null); // ended by itself (storage full): stop the pushes too
          this.net = null;
        }
        this.takes = [msg.take, ...this.takes.filter((t) => t.id !== msg.take.id)];
        if (msg.message) this.notice = msg.message;
        break;
      case 'takes':
        this.takes = msg.takes;
        if (msg.recovered.length) this.notice = `Recovered ${msg.recovered.length === 1 ? 'a take' : `${msg.recovered.length} takes`} cut off when the page closed mid-recording: everything written before is kept.`;
        break;
      case 'error':
        this.notice = `Recorder: ${msg.message}`;
        break;
      default:
        msg satisfies never;
    }
    this.changed();
  }

  private tell(notice: string): void {
    this.notice = notice;
    this.changed();
  }

  private post(msg: ToRecorder): void {
    if (!this.worker) {
      this.worker = new Worker(new URL('../../workers/recorder.worker.ts', import.meta.url), { type: 'module', name: 'tutti-recorder' });
      this.worker.onmessage = (ev: MessageEvent<FromRecorder>) => this.onMessage(ev.data);
      this.worker.onerror = (ev) => this.tell(`The recorder failed: ${ev.message}`);
    }
    this.worker.postMessage(msg);
  }

  private changed(): void {
    this.dispatchEvent(new Event('change'));
  }
}

function slug(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 40) || 'take';
}
