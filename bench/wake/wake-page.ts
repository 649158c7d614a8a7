// Bench page: runs the wake-up comparison once per mode in a cross-origin-isolated page and
// leaves the results on window.__wakeResults for the bench runner.

import type { FromWakeWorker, WakeMode, WakeResult } from './wake-protocol.ts';
import workletUrl from './wake.worklet.ts?worker&url';

async function runMode(mode: WakeMode, seconds: number): Promise<WakeResult> {
  const ctx = new AudioContext({ sampleRate: 48_000, latencyHint: 0 });
  await ctx.audioWorklet.addModule(workletUrl);
  const control = new SharedArrayBuffer(4);
  const node = new AudioWorkletNode(ctx, 'wake-probe', { numberOfInputs: 0, numberOfOutputs: 1, processorOptions: { control } });
  node.connect(ctx.destination);
  const worker = new Worker(new URL('./wake.worker.ts', import.meta.url), { type: 'module' });
  let port: MessagePort | undefined;
  if (mode === 'port') {
    const ch = new MessageChannel();
    node.port.postMessage({ port: ch.port1 }, [ch.port1]);
    port = ch.port2;
  }
  const result = new Promise<WakeResult>((resolve) => {
    worker.onmessage = (e: MessageEvent<FromWakeWorker>) => resolve(e.data.result);
  });
  worker.postMessage({ type: 'run', mode, control, seconds, ...(port ? { port } : {}) }, port ? [port] : []);
  await ctx.resume();
  const r = await result;
  worker.terminate();
  await ctx.close();
  return r;
}

declare global {
  interface Window {
    __wakeBench: (seconds: number) => Promise<WakeResult[]>;
  }
}
window.__wakeBench = async (seconds: number) => {
  const out: WakeResult[] = [];
  for (const mode of ['waitAsync', 'interval', 'port'] as const) out.push(await runMode(mode, seconds));
  return out;
};
