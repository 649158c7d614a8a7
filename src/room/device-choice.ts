// The player's input and output devices during a session (main thread; no audio): the lists the
// browser gives, following hot-plugging (`devicechange`, and a look every POLL_MS: Chromium on
// Linux hears of sound-card hot-plugging through udev, not of PulseAudio's own devices coming and
// going, such as a Bluetooth headset or a network sink); the devices in use; switching them on
// the running engine without leaving the room; the choice this computer remembers (devices.ts),
// applied when the session starts; and, when the device in use disappears, the fall back to the
// system default with a notice that says so. No DOM: <tutti-devices> shows it.

import type { AudioEngine } from '../engine/audio-engine.ts';
import { DEFAULT_DEVICE, findDevice, listDevices, outputChoiceUnavailable, rememberDevice, rememberInputChannels, rememberedDevices, rememberedInputChannels, type AudioDevice, type DeviceLists } from '../engine/devices.ts';
import type { InputChannels } from '../shared/input-channels.ts';

/** How often the device lists are read again without a `devicechange` (ms). */
const POLL_MS = 2000;
/** An input whose stream ends again this soon after a fallback is not fallen back from again (ms). */
const FALLBACK_MS = 5000;

export class DeviceChoice extends EventTarget {
  lists: DeviceLists = { inputs: [DEFAULT_DEVICE], outputs: [DEFAULT_DEVICE] };
  input: AudioDevice = DEFAULT_DEVICE;
  output: AudioDevice = DEFAULT_DEVICE;
  /** Which of the input's channels we send, and how many it has. */
  inputChannels: InputChannels = 'both';
  inputChannelCount = 1;
  /** Why the output cannot be chosen in this browser, or null. */
  readonly outputUnavailable = outputChoiceUnavailable();
  /** Why the input channels cannot be chosen here, or null. */
  readonly inputChannelsUnavailable: string | null;
  /** What the player should know: a device gone, a switch that failed (cleared by the next choice). */
  notice = '';
  /** A switch in progress: the next one waits for it (two quick choices must not interleave). */
  private busy: Promise<void> = Promise.resolve();
  private readonly onDeviceChange = (): void => void this.serial(() => this.refresh());
  private poll: ReturnType<typeof setInterval> | undefined;
  private offCaptureEnded: (() => void) | undefined;
  /** When an input switch last completed. */
  private inputSwitchedMs = -Infinity;
  /** When the input last fell back because its stream ended (one fallback per FALLBACK_MS: no loop). */
  private lastFallbackMs = -Infinity;

  constructor(private readonly engine: AudioEngine) {
    super();
    this.inputChannelsUnavailable = engine.inputChannelsUnavailable();
  }

  /** Lists the devices, puts the remembered ones in use where they are here, and follows plugging from now on. */
  async start(): Promise<void> {
    navigator.mediaDevices.addEventListener('devicechange', this.onDeviceChange);
    this.poll = setInterval(this.onDeviceChange, POLL_MS);
    this.offCaptureEnded = this.engine.net.on('capture-ended', (reason) => {
      const at = performance.now();
      void this.serial(() => this.inputEnded(reason, at));
    });
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
      await this.applyInputChannels();
    });
    this.changed();
  }

  stop(): void {
    navigator.mediaDevices.removeEventListener('devicechange', this.onDeviceChange);
    clearInterval(this.poll);
    this.offCaptureEnded?.();
  }

  /**
   * The microphone's stream ended (unplugged, or the track stopped): the others would hear silence.
   * Open the system default instead, in the room, and say so; where that is what ended, or it
   * fails, or it ends again at once, say why instead (the player can pick another input).
   */
  private async inputEnded(reason: string, atMs: number): Promise<void> {
    if (this.inputSwitchedMs > atMs) return; // a switch since (the lists saw it gone) sends again
    const now = performance.now();
    const was = this.input;
    if (now - this.lastFallbackMs < FALLBACK_MS) {
      this.notice = `${reason} Nothing is being sent: choose an input.`;
      this.changed();
      return;
    }
    this.lastFallbackMs = now;
    this.lists = await listDevices();
    if (await this.switchInput(DEFAULT_DEVICE, false)) {
      this.notice = `Your input "${was.label}" stopped delivering audio (unplugged?): now using the system default. You are still in the room.`;
    } else {
      this.notice = `${reason} ${this.notice}`;
    }
    this.changed();
  }

  /** The player chose input `device`: switch now, remember it for this computer. */
  chooseInput(device: AudioDevice): Promise<void> {
    return this.serial(async () => {
      this.notice = '';
      if (await this.switchInput(device, true)) rememberDevice('input', device);
    });
  }

  /** The player chose which input channels to send: from the next capture buffer, remembered for this input. */
  chooseInputChannels(channels: InputChannels): Promise<void> {
    return this.serial(async () => {
      this.notice = '';
      try {
        await this.engine.setInputChannels(channels);
        this.inputChannels = channels;
        rememberInputChannels(this.input.id, channels);
      } catch (err) {
        this.notice = `Could not choose the input channels (${err instanceof Error ? err.message : String(err)}).`;
      } finally {
        this.inputChannelCount = this.engine.inputChannelCount();
        this.changed();
      }
    });
  }

  /** The channels remembered for the input in use (both where none), put in use. */
  private async applyInputChannels(): Promise<void> {
    const channels = this.inputChannelsUnavailable ? 'both' : rememberedInputChannels(this.input.id);
    if (channels !== this.inputChannels) {
      try {
        await this.engine.setInputChannels(channels);
        this.inputChannels = channels;
      } catch (err) {
        this.notice = `Could not choose the input channels (${err instanceof Error ? err.message : String(err)}).`;
      }
    }
    this.inputChannelCount = this.engine.inputChannelCount();
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
      this.inputSwitchedMs = performance.now();
      this.input = device;
      await this.applyInputChannels();
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
