// Messages of the wake-up benchmark (bench page ↔ bench worker), and the probe worklet's options.

export type WakeMode = 'waitAsync' | 'interval' | 'port';

export type ToWakeWorker = { type: 'run'; mode: WakeMode; control: SharedArrayBuffer; port?: MessagePort; seconds: number };

export interface WakeResult {
  mode: WakeMode;
  seconds: number;
  quanta: number;
  wakes: number;
  wakesPerSecond: number;
  quantaPerWake: number;
  maxQuantaPerWake: number;
  /** Gap between successive wakes that found work, ms. */
  gapP50: number;
  gapP99: number;
  gapMax: number;
}
export type FromWakeWorker = { type: 'result'; result: WakeResult };
