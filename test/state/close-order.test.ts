import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { persistChanges } from '../../pipelines/persistence.js';
import { loadConfig } from '../../src/config/load.js';
import { Persistence } from '../../src/persist/store.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';

const venues = loadConfig({ env: {} }).venues;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A state with `n` markets, each with a book and a quote, all dirty in `p`. */
function dirtyState(p: Persistence, n: number): EngineState {
  const s = new EngineState(venues);
  persistChanges(s, p);
  const base = { venue: 'venue_a', timestamp: 1, localTimestamp: 60_000 };
  for (let i = 0; i < n; i++) {
    const id = `M${i}`;
    applyEvent(s, { ...base, type: 'market', marketId: id, title: `Will ${i}?`, status: 'active', closeTime: 9e12 });
    applyEvent(s, { ...base, type: 'book_snapshot', marketId: id, instrument: id, bids: [[4000, 10]], asks: [[4500, 2]] });
  }
  return s;
}

describe('Persistence.close with a snapshot in flight', () => {
  // The periodic snapshot writes in chunks and checks the disk guard (a read of LMDB's stats)
  // between them; a close() that does not wait for it lets that read land on a closing
  // environment, and lmdb-js then throws "Attempt to reset an invalid read txn" from a timer.
  it('waits for the running snapshot, so nothing reads LMDB after it closes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-close-'));
    dirs.push(dir);
    const p = new Persistence(dir);
    const s = dirtyState(p, 2_000);
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown): void => void uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      const running = p.snapshot(s);
      await p.close();
      const result = await running.then(
        (r) => r,
        (e: unknown) => e,
      );
      await new Promise((r) => setTimeout(r, 20));
      expect(uncaught).toEqual([]);
      expect(result).toEqual({ catalog: 2_000, quotes: 2_000, books: 2_000 });
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    // everything the snapshot took was written before the environment closed
    const p2 = new Persistence(dir);
    expect(p2.load(new EngineState(venues))).toMatchObject({ markets: 2_000, books: 2_000 });
    await p2.close();
  });
});
