/// <reference path="../../worklets/audioworklet.d.ts" />
// Probe worklet of the wake-up bench: per quantum, bumps a shared counter and notifies (the
// Tutti mechanism); in 'port' mode it also posts a message per quantum (the alternative).

class WakeProbe extends AudioWorkletProcessor {
  private readonly counter: Int32Array;
  private port2: MessagePort | null = null;
  constructor(options: AudioWorkletNodeOptions) {
    super(options);
    this.counter = new Int32Array((options.processorOptions as { control: SharedArrayBuffer }).control);
    this.port.onmessage = (e) => (this.port2 = (e.data as { port: MessagePort }).port);
  }
  override process(): boolean {
    const n = Atomics.add(this.counter, 0, 1) + 1;
    Atomics.notify(this.counter, 0);
    if (this.port2) this.port2.postMessage(n);
    return true;
  }
}
registerProcessor('wake-probe', WakeProbe);
