// Keeps the browser's real audio output running while a session is open (main thread, set-up only).
//
// Chromium hands an AudioContext whose output has been exactly zero for 30 s to a timer-driven
// fake sink, to save power (media/base/silent_sink_suspender.cc), and closes the device stream.
// For a music session that is wrong, as measured on the m2e rig (docs/BENCHMARKS.md):
// - the first sound after the silence (a peer unmutes, the lesson resumes) has to reopen the
//   device: after 40 s of silence one round played 0 of 12 clicks in the next 12 s, others put
//   onsets where no timely copy could be;
// - while parked, the render clock follows a timer, not the device: on this machine about
//   −1500 ppm from the wall clock, which the drift estimator rightly read as drift.
// (Chromium also queues what it rendered while the device restarts and renders nothing while
// that queue drains, so the de-jitter rings would fill by the same amount: its source says so,
// the rig did not measure it.) A room goes silent for 30 s easily (waiting for someone to join,
// everyone muted, a pause).
//
// A constant of 2^-30 (about −181 dBFS) summed into the destination makes every rendered
// buffer non-zero. It is far below the last bit of a 24-bit converter (2^-23), so what reaches
// the speaker is unchanged, and it never passes through the mixer, its meters or its taps.

/** The offset summed into the output: non-zero for the silence check, inaudible on any device. */
export const KEEP_AWAKE_LEVEL = 2 ** -30;

/** Starts the constant source into `context.destination`; stopping the context stops it. */
export function keepDeviceAwake(context: AudioContext): ConstantSourceNode {
  const node = new ConstantSourceNode(context, { offset: KEEP_AWAKE_LEVEL });
  node.connect(context.destination);
  node.start();
  return node;
}
