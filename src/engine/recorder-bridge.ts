// The page's side of the recorder worker (workers/recorder.worker.ts): owns the worker for the
// page's lifetime, starts and stops takes (handing the record ring to the network worker, the
// heard ring to the playback worklet, and both to the recorder, so no audio passes the main
// thread), tells the recorder who each heard track is and, at the stop, each one's measured
// one-way delay (from the 1 Hz stats), keeps the list of takes and the live status for
// the views, and downloads a finished track from the Origin Private File System. The worker starts
// only when there is work: a take to record, or takes on this device to list and repair (a page
// that never records, a paired phone say, runs no recorder).

import { HEARD_I32, createHeardMemory, createRecordMemory, type HeardMemory } from '../shared/memory-layout.ts';
import { median } from '../shared/median.ts';
import type { FromRecorder, RecordingStatusMessage, TakeInfo, ToRecorder } from '../shared/recorder-protocol.ts';
import type { TrackRegistry } from '../room/track-registry.ts';
import type { AudioEngine } from './audio-engine.ts';

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
  /** The take being recorded: its engine and heard block, and what to undo at its end. */
  private live: { engine: AudioEngine; heard: HeardMemory; oneWay: Map<number, number[]>; off: (() => void)[] } | null = null;

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

  /**
   * Record a new take named after `title` (the room): our input from `engine`'s capture, and what
   * its playback renders, each participant (numbered by `tracks`) and the mix.
   */
  start(engine: AudioEngine, tracks: TrackRegistry, title: string): void {
    if (this.recording) return;
    const input = createRecordMemory();
    const heard = createHeardMemory();
    const id = `${new Date().toISOString().slice(0, 19).replace(/:/g, '-')}-${slug(title)}`;
    this.post({ type: 'start', id, title, input, heard, names: tracks.all() });
    const oneWay = new Map<number, number[]>();
    const onNames = (): void => this.post({ type: 'track-names', names: tracks.all() });
    tracks.addEventListener('change', onNames);
    const offStats = engine.net.on('stats', (m) => {
      for (const p of m.peers) {
        const t = tracks.trackOfPeer(p.peerId);
        if (t === undefined || !p.oneWayMs) continue;
        let list = oneWay.get(t);
        if (!list) oneWay.set(t, (list = []));
        list.push(p.oneWayMs.p50);
      }
    });
    this.live = { engine, heard, oneWay, off: [offStats, () => tracks.removeEventListener('change', onNames)] };
    // Worklet first: the page turns the heard ring on (HEARD_I32.ON), the engine hands it over.
    Atomics.store(new Int32Array(heard.control, 0, HEARD_I32.SIZE), HEARD_I32.ON, 1);
    engine.record(input, heard);
    this.recording = id;
    this.status = null;
    this.notice = null;
    this.changed();
  }

  /** Stop the take: the network worker and the playback worklet stop pushing first, then the recorder drains and closes. */
  async stop(): Promise<void> {
    if (!this.recording) return;
    const oneWay = this.endLive();
    await new Promise((r) => setTimeout(r, STOP_GRACE_MS));
    this.post({ type: 'stop', oneWayMs: oneWay });
  }

  /** Stop the pushes into the take's rings; returns each heard track's median one-way delay. */
  private endLive(): Record<number, number> {
    const live = this.live;
    this.live = null;
    if (!live) return {};
    Atomics.store(new Int32Array(live.heard.control, 0, HEARD_I32.SIZE), HEARD_I32.ON, 0);
    live.engine.record(null, null);
    for (const off of live.off) off();
    return Object.fromEntries([...live.oneWay].map(([t, list]) => [t, median(list)]));
  }

  delete(id: string): void {
    this.post({ type: 'delete', id });
  }

  /** Save one track of a finished take as a download (read from the Origin Private File System). */
  async download(take: TakeInfo, track: TakeInfo['tracks'][number]): Promise<void> {
    const root = await navigator.storage.getDirectory();
    const dir = await (await root.getDirectoryHandle(TAKES_DIR)).getDirectoryHandle(take.id);
    const file = await (await dir.getFileHandle(track.file)).getFile();
    this.save(file, `${take.id}-${slug(track.name)}.wav`);
  }

  /** One ZIP of a finished take (built by the recorder worker); `asPlayed`: heard tracks shifted by their one-way delay. */
  downloadArchive(take: TakeInfo, asPlayed: boolean): void {
    this.post({ type: 'archive', id: take.id, asPlayed });
  }

  private save(blob: Blob, name: string): void {
    const url = URL.createObjectURL(blob);
    const a = document.createElement('a');
    a.href = url;
    a.download = name;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }

  private onMessage(msg: FromRecorder): void {
    switch (msg.type) {
      case 'archive':
        this.save(msg.blob, msg.name);
        return;
      case 'status':
        this.status = msg;
        break;
      case 'stopped':
        if (this.recording === msg.take.id) {
          this.recording = null;
          this.status = null;
          this.endLive(); // ended by itself (storage full): stop the pushes too
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
