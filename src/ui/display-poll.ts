// Main thread: one shared timer for the room view's live visuals (level meters) that poll a value
// and move an element only when it changed. Not requestAnimationFrame: a callback requested every
// frame makes the browser run a whole frame (style, layout, commit) for every display refresh even
// when nothing moved; measured in a three-person room on this two-core machine, that was about half
// a core per page, and the audio glitched. A timer costs a frame only when a poll writes a change.

/** Polls a second: smooth enough for a level meter (a console meter's ballistics are slower). */
export const POLLS_PER_SECOND = 30;

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
