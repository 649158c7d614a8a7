// Audio devices on the page (main thread; no audio): the inputs and outputs the browser lists,
// whether this browser can choose an output for an AudioContext, and the choices this computer
// remembers. A choice is kept by device id and label: ids are stable per site on one computer,
// and the label finds the same interface again where the id changed (a browser's data cleared).

import { parseInputChannels, type InputChannels } from '../shared/input-channels.ts';

/** One device the user can choose; `id` '' is the system default. */
export interface AudioDevice {
  id: string;
  label: string;
}

export interface DeviceLists {
  inputs: AudioDevice[];
  outputs: AudioDevice[];
}

/** What this computer remembers choosing; absent = the system default. */
export interface RememberedDevices {
  input?: AudioDevice;
  output?: AudioDevice;
  /** The input channels chosen per input device, by device id ('' = the system default); absent = both. */
  inputChannels?: Record<string, InputChannels>;
}

export const DEFAULT_DEVICE: AudioDevice = { id: '', label: 'System default' };

const STORAGE_KEY = 'tutti.devices';

/** AudioContext.setSinkId (Chromium 110+), which TypeScript's DOM types do not declare yet. */
type SinkContext = AudioContext & { setSinkId(id: string): Promise<void>; readonly sinkId: string };

/** Why this browser cannot send an AudioContext to a chosen output, or null where it can. */
export function outputChoiceUnavailable(): string | null {
  if (typeof AudioContext === 'undefined' || !('setSinkId' in AudioContext.prototype)) {
    return 'This browser plays through the system default output only (it has no AudioContext.setSinkId); choose the output in the system settings.';
  }
  return null;
}

/** Sends `context`'s output to device `id` ('' = the system default). */
export async function setContextOutput(context: AudioContext, id: string): Promise<void> {
  const why = outputChoiceUnavailable();
  if (why) throw new Error(why);
  await (context as SinkContext).setSinkId(id);
}

/** The inputs and outputs the browser lists now, the system default first (labels need the microphone permission). */
export async function listDevices(): Promise<DeviceLists> {
  const all = await navigator.mediaDevices.enumerateDevices();
  const pick = (kind: MediaDeviceKind): AudioDevice[] => [
    DEFAULT_DEVICE,
    // 'default' and 'communications' are Chromium's aliases of system devices, listed again by id.
    ...all.filter((d) => d.kind === kind && d.deviceId !== 'default' && d.deviceId !== 'communications' && d.deviceId !== '').map((d, i) => ({ id: d.deviceId, label: d.label || `${kind === 'audioinput' ? 'Input' : 'Output'} ${i + 1}` })),
  ];
  return { inputs: pick('audioinput'), outputs: pick('audiooutput') };
}

/** The device of `list` that `wanted` names: the same id, else the same label; null if it is not there. */
export function findDevice(list: readonly AudioDevice[], wanted: AudioDevice | undefined): AudioDevice | null {
  if (!wanted || wanted.id === '') return DEFAULT_DEVICE;
  return list.find((d) => d.id === wanted.id) ?? list.find((d) => d.label === wanted.label && d.label !== '') ?? null;
}

export function rememberedDevices(storage: Pick<Storage, 'getItem'> = localStorage): RememberedDevices {
  try {
    const raw = storage.getItem(STORAGE_KEY);
    if (!raw) return {};
    const v = JSON.parse(raw) as unknown;
    const device = (x: unknown): AudioDevice | undefined =>
      typeof x === 'object' && x !== null && typeof (x as AudioDevice).id === 'string' && typeof (x as AudioDevice).label === 'string' ? { id: (x as AudioDevice).id, label: (x as AudioDevice).label } : undefined;
    const o = (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>;
    const input = device(o['input']);
    const output = device(o['output']);
    const inputChannels: Record<string, InputChannels> = {};
    const rawChannels = o['inputChannels'];
    if (typeof rawChannels === 'object' && rawChannels !== null) {
      for (const [id, c] of Object.entries(rawChannels)) {
        const parsed = parseInputChannels(c);
        if (parsed && parsed !== 'both') inputChannels[id] = parsed;
      }
    }
    return { ...(input ? { input } : {}), ...(output ? { output } : {}), ...(Object.keys(inputChannels).length ? { inputChannels } : {}) };
  } catch {
    return {}; // unreadable: the defaults
  }
}

/** Remembers `device` as this computer's `kind` choice (the default is remembered as no choice). */
export function rememberDevice(kind: 'input' | 'output', device: AudioDevice, storage: Pick<Storage, 'getItem' | 'setItem'> = localStorage): void {
  const r = rememberedDevices(storage);
  if (device.id === '') delete r[kind];
  else r[kind] = { id: device.id, label: device.label };
  store(r, storage);
}

/** The input channels this computer chose for input device `id` ('both' if none). */
export function rememberedInputChannels(id: string, storage: Pick<Storage, 'getItem'> = localStorage): InputChannels {
  return rememberedDevices(storage).inputChannels?.[id] ?? 'both';
}

/** Remembers the input channels chosen for input device `id` ('both' is remembered as no choice). */
export function rememberInputChannels(id: string, channels: InputChannels, storage: Pick<Storage, 'getItem' | 'setItem'> = localStorage): void {
  const r = rememberedDevices(storage);
  const map = { ...r.inputChannels };
  if (channels === 'both') delete map[id];
  else map[id] = channels;
  if (Object.keys(map).length) r.inputChannels = map;
  else delete r.inputChannels;
  store(r, storage);
}

function store(r: RememberedDevices, storage: Pick<Storage, 'setItem'>): void {
  try {
    storage.setItem(STORAGE_KEY, JSON.stringify(r));
  } catch {
    // storage full or denied: the choice holds for this session only
  }
}
