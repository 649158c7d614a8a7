// Page-side handle of the network worker: typed methods for every ToWorker message, typed
// events for every FromWorker message, and the worker's lifetime. Components never postMessage.

import type { InputChannels } from '../shared/input-channels.ts';
import type { QuantaPerPacket, SendBits } from '../shared/wire.ts';
import type { HeardMemory, RecordMemory } from '../shared/memory-layout.ts';
import type { MetronomeState } from '../shared/metronome.ts';
import type { ClockRefMessage, FromWorker, InitMessage, OutputDropouts, PeerClosedReason, StatsMessage, ToWorker, TraceMessage } from '../shared/worker-protocol.ts';

type Handlers = {
  stats: (m: StatsMessage) => void;
  'peer-open': (peerId: string) => void;
  'peer-closed': (peerId: string, reason: PeerClosedReason) => void;
  error: (message: string) => void;
  'capture-switched': () => void;
  'capture-ended': (reason: string) => void;
  'clock-base': (baseMs: number) => void;
};

export class NetBridge {
  private readonly worker: Worker;
  private readonly handlers: { [K in keyof Handlers]: Set<Handlers[K]> } = {
    stats: new Set(),
    'peer-open': new Set(),
    'peer-closed': new Set(),
    error: new Set(),
    'capture-switched': new Set(),
    'capture-ended': new Set(),
    'clock-base': new Set(),
  };
  readonly ready: Promise<void>;
  /** get-trace requests awaiting their `trace` answer, oldest first (the worker answers in order). */
  private readonly traceWaiters: { resolve: (t: TraceMessage) => void; reject: (e: Error) => void }[] = [];

  constructor(init: Omit<InitMessage, 'type'>) {
    this.worker = new Worker(new URL('../../workers/net.worker.ts', import.meta.url), { type: 'module', name: 'tutti-net' });
    this.ready = new Promise((resolve, reject) => {
      this.worker.onerror = (e) => reject(new Error(`network worker failed to start: ${e.message}`));
      this.worker.onmessage = (ev: MessageEvent<FromWorker>) => {
        if (ev.data.type === 'ready') resolve();
        this.dispatch(ev.data);
      };
    });
    this.post({ type: 'init', ...init });
  }

  on<K extends keyof Handlers>(type: K, fn: Handlers[K]): () => void {
    this.handlers[type].add(fn);
    return () => this.handlers[type].delete(fn);
  }

  /** Hand an audio channel to the worker. Must run right after creation / inside ondatachannel. */
  /** `wire`: the highest audio wire version the peer decodes (its MemberState.wire, 1 if it does not say). */
  addPeer(peerId: string, channel: RTCDataChannel, wire: number, track = 0, micSinceMs = NaN): void {
    this.worker.postMessage({ type: 'add-peer', peerId, channel, wire, track, ...(Number.isFinite(micSinceMs) ? { micSinceMs } : {}) } satisfies ToWorker, [channel as unknown as Transferable]);
  }
  removePeer(peerId: string): void {
    this.post({ type: 'remove-peer', peerId });
  }
  setPeerMix(peerId: string, gain: number, muted: boolean): void {
    this.post({ type: 'set-peer-mix', peerId, gain, muted });
  }
  /** Manual jitter depth in quanta (`adaptive` false), or hand the choice back to the worker (`adaptive` true). */
  setDepth(depth: number, adaptive: boolean): void {
    this.post({ type: 'set-depth', depth, adaptive });
  }
  /** The room's metronome (null: none) and our advance in ms (leader mode, else 0). */
  setMetronome(state: MetronomeState | null, advanceMs: number, leaderPeerId: string | null): void {
    this.post({ type: 'set-metronome', state, advanceMs, leaderPeerId });
  }
  /** Whose clock the room follows (src/room/shared-clock.ts). */
  setClockRef(ref: ClockRefMessage['ref']): void {
    this.post({ type: 'clock-ref', ref });
  }
  /** Redundant frames per outgoing packet (0..3). */
  setRedundancy(frames: number): void {
    this.post({ type: 'set-redundancy', frames });
  }
  /** Ask `peerId`'s worker to echo our stream, and measure the round trip (PeerStats.loopbackRttMs). */
  setLoopback(peerId: string, enabled: boolean): void {
    this.post({ type: 'set-loopback', peerId, enabled });
  }
  /** Start (or stop) recording per-frame arrival times; StatsMessage.traceFrames counts them. */
  setTrace(enabled: boolean): void {
    this.post({ type: 'set-trace', enabled });
  }
  /** The arrival trace recorded so far; rejects if the worker has not answered within `timeoutMs`. */
  getTrace(timeoutMs = 10_000): Promise<TraceMessage> {
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (t: TraceMessage) => {
          clearTimeout(timer);
          resolve(t);
        },
        reject,
      };
      const timer = setTimeout(() => {
        const i = this.traceWaiters.indexOf(waiter);
        if (i >= 0) this.traceWaiters.splice(i, 1);
        reject(new Error(`the network worker sent no trace within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.traceWaiters.push(waiter);
      this.post({ type: 'get-trace' });
    });
  }
  setSend(channels: 1 | 2, muted: boolean, bits: SendBits, perPacket: QuantaPerPacket): void {
    this.post({ type: 'set-send', channels, muted, bits, perPacket });
  }
  /** Hand the microphone's MediaStreamTrackProcessor stream to the worker (transferred). */
  setCaptureSource(readable: ReadableStream<AudioData>): void {
    this.worker.postMessage({ type: 'capture-source', readable } satisfies ToWorker, [readable as unknown as Transferable]);
  }
  /** A take: push our dry input into its record ring (the recorder worker drains it) and date its heard ring; or stop (nulls). */
  record(input: RecordMemory | null, heard: HeardMemory | null): void {
    this.post({ type: 'record', input, heard });
  }
  /** Which input channels become our capture's left and right (the track capture path). */
  setInputChannels(channels: InputChannels): void {
    this.post({ type: 'set-input-channels', channels });
  }
  /** A reading of our output device's clock (src/engine/output-clock.ts). */
  outputClock(contextTime: number, wallMs: number, dropouts: OutputDropouts | null): void {
    this.post({ type: 'output-clock', contextTime, wallMs, dropouts });
  }
  setMasterGain(gain: number): void {
    this.post({ type: 'set-master-gain', gain });
  }
  terminate(): void {
    this.post({ type: 'stop' });
    this.worker.terminate();
    for (const w of this.traceWaiters.splice(0)) w.reject(new Error('the network worker stopped before sending the trace'));
  }

  private post(msg: ToWorker): void {
    this.worker.postMessage(msg);
  }

  private dispatch(m: FromWorker): void {
    switch (m.type) {
      case 'ready':
        return;
      case 'stats':
        for (const fn of this.handlers.stats) fn(m);
        return;
      case 'trace':
        this.traceWaiters.shift()?.resolve(m);
        return;
      case 'peer-open':
        for (const fn of this.handlers['peer-open']) fn(m.peerId);
        return;
      case 'peer-closed':
        for (const fn of this.handlers['peer-closed']) fn(m.peerId, m.reason);
        return;
      case 'error':
        for (const fn of this.handlers.error) fn(m.message);
        return;
      case 'capture-switched':
        for (const fn of this.handlers['capture-switched']) fn();
        return;
      case 'capture-ended':
        for (const fn of this.handlers['capture-ended']) fn(m.reason);
        return;
      case 'clock-base':
        for (const fn of this.handlers['clock-base']) fn(m.baseMs);
        return;
      default:
        m satisfies never;
    }
  }
}
