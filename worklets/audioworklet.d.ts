// Minimal typings of AudioWorkletGlobalScope (TypeScript ships none). Only what Tutti uses.

declare abstract class AudioWorkletProcessor {
  readonly port: MessagePort;
  constructor(options?: AudioWorkletNodeOptions);
  abstract process(inputs: Float32Array[][], outputs: Float32Array[][], parameters: Record<string, Float32Array>): boolean;
}
interface AudioWorkletNodeOptions {
  numberOfInputs?: number;
  numberOfOutputs?: number;
  outputChannelCount?: number[];
  processorOptions?: unknown;
}
interface MessagePort {
  postMessage(message: unknown): void;
  onmessage: ((ev: { data: unknown }) => void) | null;
}
declare function registerProcessor(name: string, ctor: new (options: AudioWorkletNodeOptions) => AudioWorkletProcessor): void;
declare const currentFrame: number;
declare const currentTime: number;
declare const sampleRate: number;
