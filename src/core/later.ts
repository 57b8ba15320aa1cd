/**
 * Runs `run` in a later turn of the event loop, after at least one poll phase (the socket reads) and
 * one check phase (the turn's flush, an immediate) since the call; returns its cancel. For a long
 * piece of work cut in slices: the frames read between two slices go out between them.
 *
 * A plain `setTimeout(run, 0)` does not promise that on Node 20. Its libuv (1.46) runs every timer
 * due in a loop over the timer heap, and Node keeps one libuv timer for all of its timers: a timer
 * set in the microtasks after the last timer of a timers phase re-arms that one timer, and once the
 * loop's clock has passed a millisecond (any timer set later in those microtasks reads it) the heap
 * loop finds it due and runs the timers phase again, in the same iteration. The next slice then
 * follows the last with no socket read and no flush between them, and a chain of slices can hold the
 * loop for all of its slices (libuv issue 4245; 1.48 runs only the timers due when the phase began).
 * An immediate first puts one check phase, and the poll phase before it, between the call and the
 * timer; the timer after it still lets that check phase's flush of the frames read meanwhile run
 * before `run`.
 */
export function laterTurn(run: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  const immediate = setImmediate(() => {
    timer = setTimeout(run, 0);
  });
  return () => {
    clearImmediate(immediate);
    if (timer !== undefined) clearTimeout(timer);
  };
}
