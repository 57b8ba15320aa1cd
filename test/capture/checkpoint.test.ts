import { pack, unpack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { checkpointOf, packCheckpoint } from '../../src/capture/checkpoint.js';
import { OrderBook } from '../../src/core/book.js';
import type { VenueLabel } from '../../src/core/types.js';

const T0 = Date.UTC(2026, 2, 10, 12);

/** `n` books, every third one never snapshotted (not ready: not in a checkpoint), the rest with a few levels. */
function books(n: number): (readonly [VenueLabel, string, OrderBook])[] {
  const out: (readonly [VenueLabel, string, OrderBook])[] = [];
  for (let i = 0; i < n; i++) {
    const b = new OrderBook(`KX-${i}`);
    if (i % 3 !== 2)
      b.snapshot(
        [
          [4000 + (i % 50), 10 + i],
          [3900, 2.5],
        ],
        [[4200 + (i % 40), 5]],
        T0 + i,
      );
    out.push([i % 2 ? 'venue_a' : 'venue_e', `KX-${i}`, b]);
  }
  return out;
}

describe('capture checkpoints packed a book at a time', () => {
  // Array heads of each msgpack size: fixarray (under 16), array 16, array 32 (65,536 and more).
  it.each([0, 5, 40, 100_000])('are the bytes msgpack gives the whole checkpoint (%i books)', (n) => {
    const bs = books(n);
    const packed = packCheckpoint(bs, 1234, T0 + 99);
    const whole = checkpointOf(bs, 1234, T0 + 99);
    expect(packed.equals(pack(whole))).toBe(true);
    expect(unpack(packed)).toEqual(whole);
  });
});
