// Which channels of the input device become our capture's left and right: on a two-input
// interface a player sends channel 1 (say a guitar), channel 2 (a microphone) or both as stereo.
// The page chooses (src/room/device-choice.ts); the network worker applies it as it reads each
// capture buffer (workers/track-capture.ts), so a change takes effect at the next buffer, with
// no new device opened and nothing for the listeners to resync.

export type InputChannels = 'both' | 'first' | 'second';

export const INPUT_CHANNEL_CHOICES: readonly InputChannels[] = ['both', 'first', 'second'];

export const INPUT_CHANNEL_LABELS: Readonly<Record<InputChannels, string>> = {
  both: 'Channels 1 + 2 (stereo)',
  first: 'Channel 1 only (on both sides)',
  second: 'Channel 2 only (on both sides)',
};

const FIRST_BOTH_SIDES = [0, 0] as const;
const SECOND_BOTH_SIDES = [1, 1] as const;
const STEREO = [0, 1] as const;

/**
 * The device's channel (plane) read into our left and our right, for a buffer with `count`
 * channels. Called for every capture buffer in the worker: it returns shared constants, never a
 * new array.
 */
export function inputPlanes(choice: InputChannels, count: number): readonly [number, number] {
  if (count < 2) return FIRST_BOTH_SIDES; // a mono device has only channel 1
  return choice === 'first' ? FIRST_BOTH_SIDES : choice === 'second' ? SECOND_BOTH_SIDES : STEREO;
}

export function parseInputChannels(x: unknown): InputChannels | null {
  return typeof x === 'string' && (INPUT_CHANNEL_CHOICES as readonly string[]).includes(x) ? (x as InputChannels) : null;
}
