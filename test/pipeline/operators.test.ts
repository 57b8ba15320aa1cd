import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { applyToState } from '../../src/pipeline/operators.js';
import { EngineState } from '../../src/state/engine.js';

const venues = loadConfig({ env: {} }).venues;
const base = { venue: 'venue_a', marketId: 'M', timestamp: 1, localTimestamp: 60_000 };
const ev: Record<string, NormalizedEvent> = {
  m: { ...base, type: 'market', title: 'M?', status: 'active' },
  b: { ...base, type: 'book_snapshot', instrument: 'M', bids: [[4000, 10]], asks: [[4600, 5]] },
  d: { ...base, type: 'book_delta', instrument: 'M', changes: [['bid', 4200, 3]] },
  t: { ...base, type: 'trade', instrument: 'M', tradeId: 't1', price: 4300, yesPrice: 4300, size: 2, side: 'buy', takerSide: 'yes' },
};

/** What the state says about market M when an event is passed on: known, best bid, trades kept. */
const seen = (s: EngineState) => ({ known: s.catalog.get('venue_a', 'M') !== undefined, bid: s.quotes.get('venue_a', 'M')?.yesBid, trades: s.trades.size });

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('applyToState (marble)', () => {
  it('passes every event on unchanged, in order and at the same frame', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-m-b--d-t-|', ev);
      expectObservable(source.pipe(applyToState(new EngineState(venues)))).toBe('-m-b--d-t-|', ev);
      expectSubscriptions(source.subscriptions).toBe('^---------!');
    });
  });

  it('applies each event to the state before passing it on', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = new EngineState(venues);
      const out = cold('-m-b-d-t|', ev).pipe(
        applyToState(s),
        map(() => seen(s)),
      );
      expectObservable(out).toBe('-m-b-d-t|', {
        m: { known: true, bid: undefined, trades: 0 },
        b: { known: true, bid: 4000, trades: 0 },
        d: { known: true, bid: 4200, trades: 0 },
        t: { known: true, bid: 4200, trades: 1 },
      });
    });
  });

  it('passes an error through after applying what came before it', () => {
    scheduler().run(({ cold, expectObservable, flush }) => {
      const s = new EngineState(venues);
      const failure = new Error('socket closed');
      expectObservable(cold('-m-b-#', ev, failure).pipe(applyToState(s))).toBe('-m-b-#', ev, failure);
      flush();
      expect(seen(s)).toEqual({ known: true, bid: 4000, trades: 0 });
    });
  });

  it('unsubscribes from its source when its subscriber does', () => {
    scheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const s = new EngineState(venues);
      const source = hot('-m-b-d-t-|', ev);
      expectObservable(source.pipe(applyToState(s)), '^--!').toBe('-m-', ev);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});
