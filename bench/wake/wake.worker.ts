/// <reference lib="webworker" />
// Bench worker: is woken for each captured quantum by one of three mechanisms and records how
// often it woke and how many quanta each wake found.

import type { FromWakeWorker, ToWakeWorker, WakeMode } from './wake-protocol.ts';

declare const self: DedicatedWorkerGlobalScope;

self.onmessage = (ev: MessageEvent<ToWakeWorker>) => {
  const { mode, control, port, seconds } = ev.data;
  const counter = new Int32Array(control);
  const gaps: number[] = [];
  let seen = Atomics.load(counter, 0);
  let wakes = 0;
  let quanta = 0;
  let maxPerWake = 0;
  let lastWake = performance.now();
  const start = lastWake;
  let done = false;
  const onWake = (): void => {
    const now = performance.now();
    const value = Atomics.load(counter, 0);
    const n = value - seen;
    seen = value;
    if (n > 0) {
      wakes++;
      quanta += n;
      if (n > maxPerWake) maxPerWake = n;
      gaps.push(now - lastWake);
      lastWake = now;
    }
    if (now - start >= seconds * 1000 && !done) {
      done = true;
      finish(mode, now - start);
    }
  };
  const finish = (m: WakeMode, ms: number): void => {
    clearInterval(timer);
    if (port) port.onmessage = null;
    gaps.sort((a, b) => a - b);
    const q = (p: number) => Math.round(gaps[Math.min(gaps.length - 1, Math.floor(p * gaps.length))]! * 100) / 100;
    const result = {
      mode: m,
      seconds: Math.round(ms) / 1000,
      quanta,
      wakes,
      wakesPerSecond: Math.round(wakes / (ms / 1000)),
      quantaPerWake: Math.round((quanta / wakes) * 100) / 100,
      maxQuantaPerWake: maxPerWake,
      gapP50: q(0.5),
      gapP99: q(0.99),
      gapMax: q(1),
    };
    self.postMessage({ type: 'result', result } satisfies FromWakeWorker);
  };
  let timer: ReturnType<typeof setInterval> | undefined;
  switch (mode) {
    case 'waitAsync': {
      const arm = (): void => {
        if (done) return;
        const r = Atomics.waitAsync(counter, 0, seen);
        if (r.async) void r.value.then(() => { onWake(); arm(); });
        else queueMicrotask(() => { onWake(); arm(); });
      };
      arm();
      break;
    }
    case 'interval':
      timer = setInterval(onWake, 128 / 48);
      break;
    case 'port':
      port!.onmessage = onWake;
      break;
  }
};
