import { describe, expect, it } from 'vitest';
import { BoardModel, FADE_MS, matches, RANK_MS } from '../../web/src/board-model.js';

/** The dashboard board's state (web/src/board-model.ts), fed the WebSocket messages the hub sends. */
type Opp = {
  opportunity_id: string;
  roi: number;
  size: number;
  event_type?: string;
  legs: { platform: string; market_id: string; side: string; price: number; size: number }[];
};

const opp = (id: string, roi: number, platform = 'venue_a', event_type = 'sports'): Opp => ({
  opportunity_id: id,
  roi,
  size: 100,
  event_type,
  legs: [{ platform, market_id: `m-${id}`, side: 'yes', price: 40, size: 100 }],
});
const arb = (group: number, opps: Opp[]) =>
  ({ type: 'arb', channel: 'arb', group_id: group, title: `g${group}`, opportunities: opps, seq: 1, epoch: 1, ts: 0 }) as never;
const expired = (group: number, id: string, reason: string) =>
  ({ type: 'arb_expired', channel: 'arb', group_id: group, opportunity_id: id, close_reason: reason, record: {}, seq: 2, epoch: 1, ts: 0 }) as never;

describe('BoardModel', () => {
  it("replaces a group's list with its message, and ranks by ROI", () => {
    const m = new BoardModel();
    m.update(arb(1, [opp('a', 2), opp('b', 5)]), 0);
    m.update(arb(2, [opp('c', 3)]), 0);
    expect(m.rows(0).map((r) => r.id)).toEqual(['b', 'c', 'a']);
    m.update(arb(1, [opp('a', 2), opp('b', 5)]), 10);
    expect(m.liveCount).toBe(3);
  });

  it('keeps places between rankings, puts a new row where its ROI goes, and ranks again after RANK_MS', () => {
    const m = new BoardModel();
    m.update(arb(1, [opp('a', 5), opp('b', 3)]), 0);
    expect(m.rows(0).map((r) => r.id)).toEqual(['a', 'b']);
    m.update(arb(1, [opp('a', 1), opp('b', 3), opp('n', 4)]), 10);
    expect(m.rows(10).map((r) => r.id)).toEqual(['n', 'a', 'b']); // a kept its place; n went before the first it beats
    expect(m.rows(RANK_MS).map((r) => r.id)).toEqual(['n', 'b', 'a']);
  });

  it('fades a closed opportunity with its reason, whichever of arb_expired and the new list comes first, then drops it', () => {
    const m = new BoardModel();
    m.update(arb(1, [opp('a', 5), opp('b', 3)]), 0);
    m.expired(expired(1, 'a', 'book_moved'), 100);
    m.update(arb(1, [opp('b', 3)]), 110);
    m.update(arb(1, []), 120);
    m.expired(expired(1, 'b', 'size_gone'), 130);
    const closed = Object.fromEntries(m.rows(200).map((r) => [r.id, r.closed?.reason]));
    expect(closed).toEqual({ a: 'book_moved', b: 'size_gone' });
    expect(m.liveCount).toBe(0);
    expect(m.sweep(100 + FADE_MS - 1)).toBe(false);
    expect(m.sweep(100 + FADE_MS)).toBe(true);
    expect(m.rows(200 + FADE_MS).map((r) => r.id)).toEqual(['b']);
    m.sweep(120 + FADE_MS);
    expect(m.rows(300 + FADE_MS)).toEqual([]);
  });

  it('marks one that left its list without an arb_expired as gone, and revives one that comes back', () => {
    const m = new BoardModel();
    m.update(arb(1, [opp('a', 5)]), 0);
    m.update(arb(1, []), 10);
    expect(m.rows(10)[0]?.closed?.reason).toBe('gone');
    m.update(arb(1, [opp('a', 6)]), 20);
    expect(m.rows(20)[0]?.closed).toBeUndefined();
  });

  it('filters by kind, venue, category and minimum ROI', () => {
    const m = new BoardModel();
    m.update(arb(1, [opp('a', 5, 'venue_a', 'sports'), opp('b', 1, 'venue_b', 'politics')]), 0);
    const ids = (f: Partial<Parameters<typeof matches>[1]>) =>
      m
        .rows(0)
        .filter((r) => matches(r, { kind: 'all', venue: '', category: '', minRoi: 0, ...f }))
        .map((r) => r.id);
    expect(ids({})).toEqual(['a', 'b']);
    expect(ids({ venue: 'venue_b' })).toEqual(['b']);
    expect(ids({ category: 'sports' })).toEqual(['a']);
    expect(ids({ minRoi: 2 })).toEqual(['a']);
    expect(ids({ kind: 'ev' })).toEqual([]);
  });
});
