// Main thread: one shared timer for the room view's live visuals (level meters) that poll a value
// and move an element only when it changed. Not requestAnimationFrame: a callback requested every
// frame makes the browser run a whole frame (style, layout, commit) for every display refresh even
// when nothing moved; measured in a three-person room on this two-core machine, that was about half
// a core per page, and the audio glitched. A timer costs a frame only when a poll writes a change.

/**
 * Polls a second. Each poll that moves a bar costs the page a frame (style, commit, composite):
 * in a three-person room of headless browsers on a two-core machine (`npx tsx bench/room-cpu.ts`),
 * the meters at 30 polls a second took ~28 % of one core across the three pages, and the machine
 * had no idle time left. 15 is still smooth for a bar whose level the audio thread holds as a
 * decaying peak (every transient shows: a poll reads the peak, not the sample), and a console
 * meter's ballistics are slower still.
 */
export const POLLS_PER_SECOND = 15;

const pollers = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | null = null;

/** Calls `poll` POLLS_PER_SECOND times a second until the returned function is called. */
export function onDisplayPoll(poll: () => void): () => void {
  pollers.add(poll);
  timer ??= setInterval(() => {
    for (const p of pollers) p();
  }, 1000 / POLLS_PER_SECOND);
  return () => {
    pollers.delete(poll);
    if (pollers.size === 0 && timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  };
}
