// The UDP impairment relay (udp-impair.ts) in a Node process of its own, and the messages between
// it and the test. In the test's own process the relay shared one event loop with Playwright's
// traffic to four browser processes: a pause there (a large stats reply, a garbage collection)
// held every datagram of both directions at once, SCTP's queue at the sender grew past its limit,
// and the "clean" TURN path dropped a burst of frames (34 in one clean-clone run). Alone, the relay
// wakes for datagrams only. Node side of the TURN fault test.

import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ImpairCounters, ImpairOptions } from './udp-impair.ts';

/** Test → relay process. */
export type ToRelay =
  | { kind: 'set'; impairment: Partial<Pick<ImpairOptions, 'dropPercent' | 'reorderPercent'>> }
  | { kind: 'snapshot'; id: number }
  | { kind: 'close' };

/** Relay process → test. */
export type FromRelay =
  | { kind: 'listening'; port: number }
  | { kind: 'snapshot'; id: number; counters: ImpairCounters }
  | { kind: 'error'; message: string };

const CHILD = fileURLToPath(new URL('./udp-impair-child.ts', import.meta.url));

export class UdpImpairRelayProcess {
  port = 0;
  private readonly child: ChildProcess;
  private nextId = 0;
  private readonly waiting = new Map<number, (c: ImpairCounters) => void>();
  private exited: Promise<void>;

  constructor(serverPort: number, opts: ImpairOptions) {
    this.child = fork(CHILD, [String(serverPort), JSON.stringify(opts)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.exited = new Promise((r) => this.child.once('exit', () => r()));
    this.child.on('message', (m: FromRelay) => {
      if (m.kind === 'snapshot') {
        this.waiting.get(m.id)?.(m.counters);
        this.waiting.delete(m.id);
      }
    });
  }

  async start(): Promise<this> {
    this.port = await new Promise<number>((resolve, reject) => {
      const onMessage = (m: FromRelay) => {
        if (m.kind === 'listening') resolve(m.port);
        if (m.kind === 'error') reject(new Error(`UDP impairment relay: ${m.message}`));
      };
      this.child.on('message', onMessage);
      this.child.once('exit', (code) => reject(new Error(`UDP impairment relay exited with ${code} before listening`)));
    });
    return this;
  }

  setImpairment(impairment: Partial<Pick<ImpairOptions, 'dropPercent' | 'reorderPercent'>>): void {
    this.send({ kind: 'set', impairment });
  }

  snapshot(): Promise<ImpairCounters> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, resolve);
      if (!this.send({ kind: 'snapshot', id })) reject(new Error('UDP impairment relay is gone'));
    });
  }

  async close(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.send({ kind: 'close' });
      const killed = setTimeout(() => this.child.kill('SIGKILL'), 3000);
      await this.exited;
      clearTimeout(killed);
    }
  }

  private send(m: ToRelay): boolean {
    return this.child.connected && this.child.send(m);
  }
}
