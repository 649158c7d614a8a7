// Start a TypeScript entry in a node:worker_threads thread, for the two-thread ring tests.
// `new Worker(url, { execArgv: ['--import', 'tsx'] })` fails on Node 20 with
// ERR_UNKNOWN_FILE_EXTENSION (the worker's entry is loaded before tsx's hooks apply:
// privatenumber/tsx#354), so a two-line bootstrap registers tsx in the worker and then imports the
// entry. `done` resolves with the last message the thread posted, once it exits cleanly.

import { Worker } from 'node:worker_threads';

export function startTsWorker<R>(entry: URL, workerData: unknown): { worker: Worker; done: Promise<R> } {
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); });`;
  const worker = new Worker(bootstrap, { eval: true, workerData });
  const name = entry.pathname.split('/').pop();
  const done = new Promise<R>((resolve, reject) => {
    let result: R | undefined;
    worker.on('message', (m: R) => (result = m));
    worker.on('error', reject);
    worker.on('exit', (code) => {
      if (code !== 0 || result === undefined) reject(new Error(`${name} exited with code ${code}${result ? '' : ' without a result'}`));
      else resolve(result);
    });
  });
  return { worker, done };
}
