import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PackedLog } from '../../src/history/packed.js';

const dir = mkdtempSync(join(tmpdir(), 'crossbook-packed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('PackedLog (the open slice kept as bytes)', () => {
  it.each([
    ['in memory', undefined],
    ['its full chunks on disk', join(dir, 'sub', '1.open')],
  ])('reads back each value and each market chain in order, across chunks and with a record larger than a chunk (%s)', (_, file) => {
    const log = new PackedLog(file);
    const last = new Map<string, number>();
    const want = new Map<string, unknown[]>();
    // 30,000 events over 7 markets: more than one 1 MiB chunk of records.
    for (let i = 0; i < 30_000; i++) {
      const key = `m${i % 7}`;
      const e = [
        i,
        {
          type: 'book_delta',
          marketId: key,
          side: i % 2 ? 'bid' : 'ask',
          price: 5000 + (i % 90),
          size: i % 3 ? 1.5 : 0,
          localTimestamp: 1_000 + i,
          venue: undefined,
        },
      ];
      last.set(key, log.add(e, last.get(key) ?? -1));
      (want.get(key) ?? want.set(key, []).get(key)!).push(e);
    }
    // A snapshot of 100,000 levels a side packs to more than a chunk: it gets a chunk of its own, and the chain goes on after it.
    const big = [30_000, { type: 'book_snapshot', bids: Array.from({ length: 100_000 }, (_, i) => [i, i + 0.25]), asks: [] }];
    last.set('m0', log.add(big, last.get('m0')!));
    want.get('m0')!.push(big);
    const after = [30_001, { type: 'trade', price: 4200 }];
    last.set('m0', log.add(after, last.get('m0')!));
    want.get('m0')!.push(after);
    expect(log.bytes).toBeGreaterThan(2 << 20);
    for (const [key, events] of want) expect(log.chain(last.get(key))).toEqual(events);
    expect(log.chain(undefined)).toEqual([]);
    const start = log.add({ books: [['YES', [[5000, 10]], [], 1, 2, true]], quote: undefined, events: [] }, -1);
    expect(log.read(start)).toEqual({ books: [['YES', [[5000, 10]], [], 1, 2, true]], quote: undefined, events: [] });
    expect(() => log.read(1e12)).toThrow(RangeError);
    if (file !== undefined) {
      // Every chunk but the one being filled went to the file (the 100,000-level snapshot's among them), and the reads above came from it.
      expect(statSync(file).size).toBeGreaterThan(2 << 20);
      log.dispose();
      expect(existsSync(file)).toBe(false);
    }
  });
});
