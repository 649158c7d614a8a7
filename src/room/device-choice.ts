// The player's input and output devices during a session (main thread; no audio): the lists the
// browser gives, following hot-plugging (`devicechange`, and a look every POLL_MS: Chromium on
// Linux hears of sound-card hot-plugging through udev, not of PulseAudio's own devices coming and
// going, such as a Bluetooth headset or a network sink); the devices in use; switching them on
// the running engine without leaving the room; the choice this computer remembers (devices.ts),
// applied when the session starts; and, when the device in use disappears, the fall back to the
// system default with a notice that says so. No DOM: <tutti-devices> shows it.

import type { AudioEngine } from '../engine/audio-engine.ts';
import { DEFAULT_DEVICE, findDevice, listDevices, outputChoiceUnavailable, rememberDevice, rememberedDevices, type AudioDevice, type DeviceLists } from '../engine/devices.ts';

/** How often the device lists are read again without a `devicechange` (ms). */
const POLL_MS = 2000;

export class DeviceChoice extends EventTarget {
  lists: DeviceLists = { inputs: [DEFAULT_DEVICE], outputs: [DEFAULT_DEVICE] };
  input: AudioDevice = DEFAULT_DEVICE;
  output: AudioDevice = DEFAULT_DEVICE;
  /** Why the output cannot be chosen in this browser, or null. */
  readonly outputUnavailable = outputChoiceUnavailable();
  /** What the player should know: a device gone, a switch that failed (cleared by the next choice). */
  notice = '';
  /** A switch in progress: the next one waits for it (two quick choices must not interleave). */
  private busy: Promise<void> = Promise.resolve();
  private readonly onDeviceChange = (): void => void this.serial(() => this.refresh());
  private poll: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly engine: AudioEngine) {
    super();
  }

  /** Lists the devices, puts the remembered ones in use where they are here, and follows plugging from now on. */
  async start(): Promise<void> {
    navigator.mediaDevices.addEventListener('devicechange', this.onDeviceChange);
    this.poll = setInterval(this.onDeviceChange, POLL_MS);
    await this.serial(async () => {
      this.lists = await listDevices();
      const remembered = rememberedDevices();
      const currentId = this.engine.inputDeviceId();
      this.input = this.lists.inputs.find((d) => d.id === currentId && d.id !== '') ?? DEFAULT_DEVICE;
      const input = remembered.input ? findDevice(this.lists.inputs, remembered.input) : null;
      if (input && input.id !== '' && input.id !== currentId) await this.switchInput(input, false);
      const output = remembered.output && !this.outputUnavailable ? findDevice(this.lists.outputs, remembered.output) : null;
      if (output && output.id !== '') await this.switchOutput(output, false);
      const missing = [remembered.input && !input ? `input "${remembered.input.label}"` : '', remembered.output && !output && !this.outputUnavailable ? `output "${remembered.output.label}"` : '']
        .filter(Boolean);
      if (missing.length) this.notice = `Your ${missing.join(' and ')} is not connected: using the system default.`;
    });
    this.changed();
  }

  stop(): void {
    navigator.mediaDevices.removeEventListener('devicechange', this.onDeviceChange);
    clearInterval(this.poll);
  }

  /** The player chose input `device`: switch now, remember it for this computer. */
  chooseInput(device: AudioDevice): Promise<void> {
    return this.serial(async () => {
      this.notice = '';
      if (await this.switchInput(device, true)) rememberDevice('input', device);
    });
  }

  /** The player chose output `device`: switch now, remember it for this computer. */
  chooseOutput(device: AudioDevice): Promise<void> {
    return this.serial(async () => {
      this.notice = '';
      if (await this.switchOutput(device, true)) rememberDevice('output', device);
    });
  }

  private async switchInput(device: AudioDevice, told: boolean): Promise<boolean> {
    try {
      await this.engine.setInputDevice(device.id);
      this.input = device;
      return true;
    } catch (err) {
      this.notice = `Could not switch the input to "${device.label}" (${err instanceof Error ? err.message : String(err)}); still using "${this.input.label}".`;
      if (!told) this.notice = `Your input "${device.label}" could not be opened: using "${this.input.label}".`;
      return false;
    } finally {
      this.changed();
    }
  }

  private async switchOutput(device: AudioDevice, told: boolean): Promise<boolean> {
    try {
      await this.engine.setOutputDevice(device.id);
      this.output = device;
      return true;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      this.notice = told ? `Could not switch the output to "${device.label}" (${why}); still using "${this.output.label}".` : `Your output "${device.label}" could not be opened (${why}): using "${this.output.label}".`;
      return false;
    } finally {
      this.changed();
    }
  }

  /** The devices changed: new lists; a device in use that is gone falls back to the system default. */
  private async refresh(): Promise<void> {
    const lists = await listDevices();
    const same = (a: readonly { id: string; label: string }[], b: readonly { id: string; label: string }[]) => a.length === b.length && a.every((d, i) => d.id === b[i]!.id && d.label === b[i]!.label);
    if (same(lists.inputs, this.lists.inputs) && same(lists.outputs, this.lists.outputs)) return;
    this.lists = lists;
    const lostInput = this.input.id !== '' && !this.lists.inputs.some((d) => d.id === this.input.id);
    const lostOutput = this.output.id !== '' && !this.lists.outputs.some((d) => d.id === this.output.id);
    const gone: string[] = [];
    if (lostInput) {
      gone.push(`input "${this.input.label}"`);
      await this.switchInput(DEFAULT_DEVICE, false);
    }
    if (lostOutput) {
      gone.push(`output "${this.output.label}"`);
      await this.switchOutput(DEFAULT_DEVICE, false);
    }
    if (gone.length) this.notice = `Your ${gone.join(' and ')} was disconnected: now using the system default. You are still in the room.`;
    this.changed();
  }

  private serial(job: () => Promise<void>): Promise<void> {
    const next = this.busy.then(job, job);
    this.busy = next.catch(() => {});
    return next;
  }

  private changed(): void {
    this.dispatchEvent(new Event('change'));
  }
}
