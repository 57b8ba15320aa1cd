/** Counts turns of the event loop: an immediate that re-arms itself, one a check phase, until `stop`. */
export function countTurns(): { readonly turn: number; stop(): void } {
  let turn = 0;
  let spinning = true;
  const spin = (): void => {
    turn++;
    if (spinning) setImmediate(spin);
  };
  spin();
  return {
    get turn() {
      return turn;
    },
    stop: () => void (spinning = false),
  };
}
