/**
 * "Every write issued so far has settled", for any number of waiters, at a constant cost per wait.
 *
 * The store used to answer it with `Promise.all([...pending])`: a copy of every write in flight
 * and a reaction on each, per wait. The catalog flush waits every second; while LMDB's commits lag
 * (the first listing of 100k markets on a starved machine), hundreds of thousands of writes are in
 * flight and a wait starts before the last one ended, so the reactions piled up at O(writes ×
 * waits): 10 MiB a second of the main heap at 108k markets, 450 MiB → 2.4 GiB live in four
 * minutes (BENCHMARKS.md, "The main heap's peak at 108k"). Here a write is a number and a wait is
 * a number: writes are numbered as issued, `floor` is the highest number below which every
 * write has settled, and a wait resolves once `floor` reaches the last number issued before it.
 */
export class WriteBarrier {
  /** Writes issued so far (the number of the last one). */
  private issued = 0;
  /** Every write numbered up to this has settled. */
  private floor = 0;
  /** Writes above `floor + 1` that settled before some earlier one (LMDB commits in order, so rarely any). */
  private readonly early = new Set<number>();
  /** Waits in the order they began (so by target, ascending), from `head` on. */
  private waits: { readonly target: number; readonly resolve: () => void }[] = [];
  private head = 0;

  /** Writes issued and not yet settled. */
  get inFlight(): number {
    return this.issued - this.floor - this.early.size;
  }

  /**
   * Follows one write: `onError` sees its failure (before the write counts as settled). The write
   * counts as settled once its promise does, whatever the outcome.
   */
  track(p: Promise<unknown>, onError: (e: Error) => void): void {
    const n = ++this.issued;
    p.then(
      () => this.settle(n),
      (e: Error) => {
        onError(e);
        this.settle(n);
      },
    );
  }

  /** Resolves when every write tracked before this call has settled (at once when none is in flight). */
  settled(): Promise<void> {
    if (this.floor === this.issued) return Promise.resolve();
    const target = this.issued;
    return new Promise<void>((resolve) => this.waits.push({ target, resolve }));
  }

  private settle(n: number): void {
    if (n !== this.floor + 1) {
      this.early.add(n);
      return;
    }
    this.floor = n;
    while (this.early.delete(this.floor + 1)) this.floor++;
    const w = this.waits;
    while (this.head < w.length && w[this.head]!.target <= this.floor) w[this.head++]!.resolve();
    // Let go of the waits already resolved (all of them, or once they are most of the array).
    if (this.head === w.length || (this.head > 1024 && this.head * 2 > w.length)) {
      this.waits = w.slice(this.head);
      this.head = 0;
    }
  }
}
