import { describe, expect, it } from 'vitest';
import { Reorder } from '../../src/cluster/order.js';

describe('Reorder: the core numbering put back in order on an edge', () => {
  it('passes messages in order through', () => {
    const r = new Reorder<string>(1);
    expect([r.offer(1, 'a', 0), r.offer(2, 'b', 0)]).toEqual([['a'], ['b']]);
    expect(r.next).toBe(3);
  });

  it('holds messages past a hole until the core sends the missing one again, and drops what was applied', () => {
    const r = new Reorder<string>(10);
    expect(r.offer(11, 'k', 0)).toEqual([]);
    expect(r.offer(12, 'l', 1)).toEqual([]);
    expect([...r.pending()]).toEqual(['k', 'l']);
    expect(r.offer(10, 'j', 2)).toEqual(['j', 'k', 'l']);
    // Sent again after its acknowledgement was lost: already applied.
    expect(r.offer(11, 'k', 3)).toEqual([]);
    expect(r.offer(13, 'm', 3)).toEqual(['m']);
    expect([...r.pending()]).toEqual([]);
  });

  it('gives a hole up past its message or time budget', () => {
    const bySize = new Reorder<number>(1, 2, 1_000);
    expect(bySize.offer(3, 3, 0)).toEqual([]);
    expect(bySize.offer(4, 4, 0)).toEqual([]);
    expect(bySize.offer(5, 5, 0)).toBe('gap');
    const byTime = new Reorder<number>(1, 100, 1_000);
    expect(byTime.offer(3, 3, 0)).toEqual([]);
    expect(byTime.offer(4, 4, 1_000)).toEqual([]);
    expect(byTime.offer(5, 5, 1_001)).toBe('gap');
  });

  it('starts over at a snapshot number', () => {
    const r = new Reorder<number>(1);
    r.offer(5, 5, 0);
    r.clear(20);
    expect([...r.pending()]).toEqual([]);
    expect(r.offer(19, 19, 0)).toEqual([]);
    expect(r.offer(20, 20, 0)).toEqual([20]);
  });
});
