import type { Config, VenueConfig } from '../../src/config/schema.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import type { SimWorld } from '../../src/sim/world.js';
import { createWorld } from '../../src/sim/world.js';
import type { SimListing } from '../../src/sim/types.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { dataTradeToTrade } from '../../src/venues/polymarket/mappers.js';
import type { DataTrade } from '../../src/venues/polymarket/raw.js';
import { apiMarketId } from '../../src/venues/protocol.js';
import { dataTrade } from '../../src/sim/protocols/polymarket.js';

/**
 * SIMULATOR DATA. Connects a seeded simulator world's venue_b (Polymarket protocol) listings to an
 * EngineState without sockets: each listing's market and YES-token book go in as the normalized
 * events the adapter would emit, book changes as deltas, and each simulated trade as the data-api
 * record the sim server serves (src/sim/protocols/polymarket.ts `dataTrade`),
 * mapped by the real `dataTradeToTrade`. So the ledger sees exactly what the polling feed gives it:
 * the taker's wallet only (takerOnly=true), no maker.
 *
 * The world's clock is ours: each tick advances it by `msPerTick` (5 ms = the sim's default 200
 * ticks per second), so the 120 s horizon spans 24 000 ticks.
 */
export interface SimFlow {
  readonly world: SimWorld;
  readonly state: EngineState;
  readonly venue: VenueConfig;
  /** The world's clock, ms. */
  now(): number;
  /** Advances `n` ticks, calling `every(now)` once per simulated second (what the ledger's timer does). */
  run(n: number, every?: (now: number) => void): void;
  /** Wallet class of an address (lower-cased). */
  classOf(address: string): 'informed' | 'fader' | 'noise' | undefined;
  /** venue_b trades by taker class so far. */
  readonly tradesBy: Record<'informed' | 'fader' | 'noise', number>;
}

export function simFlow(config: Config, opts: { seed: number; msPerTick?: number; start?: number }): SimFlow {
  let clock = opts.start ?? Date.UTC(2026, 2, 10, 12);
  const msPerTick = opts.msPerTick ?? 5;
  const world = createWorld({ seed: opts.seed, venues: config.venues, now: () => clock });
  const venue = config.venues.find((v) => v.capabilities.walletData)!;
  const state = new EngineState(config.venues);
  const apply = (e: NormalizedEvent): void => applyEvent(state, e);
  const classes = new Map<string, 'informed' | 'fader' | 'noise'>();
  for (const k of ['informed', 'fader', 'noise'] as const) for (const a of world.walletsOf(k)) classes.set(a.toLowerCase(), k);
  const tradesBy = { informed: 0, fader: 0, noise: 0 };

  const yesToken = (l: SimListing): string => l.ids['yes_token']!;
  for (const l of world.listings(venue.label)) {
    const marketId = apiMarketId(venue, l.id);
    apply({
      type: 'market',
      venue: venue.label,
      marketId,
      title: l.title,
      status: l.status,
      yesInstrument: yesToken(l),
      noInstrument: l.ids['no_token'],
      timestamp: clock,
      localTimestamp: clock,
    });
    apply({
      type: 'book_snapshot',
      venue: venue.label,
      marketId,
      instrument: yesToken(l),
      bids: l.book.bids.levels(),
      asks: l.book.asks.levels(),
      timestamp: clock,
      localTimestamp: clock,
    });
  }

  world.onChange((c) => {
    if (c.type === 'book' && c.listing.venue === venue.label) {
      apply({
        type: 'book_delta',
        venue: venue.label,
        marketId: apiMarketId(venue, c.listing.id),
        instrument: yesToken(c.listing),
        changes: c.changes.map(([s, p, sz]) => [s, p, sz] as const),
        timestamp: c.timestamp,
        localTimestamp: c.timestamp,
      });
    } else if (c.type === 'trade' && c.trade.listing.venue === venue.label) {
      const k = classes.get(c.trade.taker.toLowerCase());
      if (k) tradesBy[k]++;
      apply(dataTradeToTrade(venue, dataTrade(c.trade) as DataTrade, c.trade.timestamp));
    }
  });

  const ticksPerSecond = Math.max(1, Math.round(1000 / msPerTick));
  return {
    world,
    state,
    venue,
    now: () => clock,
    run(n, every) {
      for (let i = 0; i < n; i++) {
        clock += msPerTick;
        world.tick(1);
        if (every && i % ticksPerSecond === ticksPerSecond - 1) every(clock);
      }
    },
    classOf: (a) => classes.get(a.toLowerCase()),
    tradesBy,
  };
}
