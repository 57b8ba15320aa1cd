import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { log } from '../../../src/core/log.js';
import type { MarketUpsert, NormalizedEvent, Quote } from '../../../src/core/types.js';
import { probabilityOf, serve } from '../../../src/sim/protocols/manifold.js';
import type { SimServer } from '../../../src/sim/types.js';
import { createWorld } from '../../../src/sim/world.js';
import { createManifoldFeed } from '../../../src/venues/manifold/feed.js';
import { manifoldMarketListSchema, manifoldMarketSchema } from '../../../src/venues/manifold/raw.js';

const cfg = loadConfig({ env: {} });
const venue = cfg.venues.find((v) => v.protocol === 'manifold')!;
const ingest = { ...cfg.ingest, pollMs: 20 };

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('manifold feed against the simulator', () => {
  it('produces the probabilities of the world across pages, before and after it moves, through faults', async () => {
    const world = createWorld({ seed: 5, venues: cfg.venues });
    const server: SimServer = await serve(world, venue, { host: '127.0.0.1', port: 0 });
    cleanups.push(() => server.close());

    // What the simulator serves is what the real API serves, by our own wire schemas.
    const page = (await (await fetch(`${server.endpoints.rest}/markets?limit=1000`)).json()) as unknown[];
    expect(manifoldMarketListSchema.safeParse(page).success).toBe(true);
    const multi = world.listings(venue.label).find((l) => l.ids['contract_id'] !== undefined)!;
    const full: unknown = await (await fetch(`${server.endpoints.rest}/slug/${multi.ids['slug']}`)).json();
    expect(manifoldMarketSchema.safeParse(full).success).toBe(true);
    expect((await fetch(`${server.endpoints.rest}/market/nope`)).status).toBe(404);

    // A small page size makes the feed walk `before` across several pages.
    const feed = createManifoldFeed({ venue, endpoints: server.endpoints, ingest, log }, { pageLimit: 5, maxPages: 50 });
    const quotes = new Map<string, Quote>();
    const markets = new Map<string, MarketUpsert>();
    let quoteEvents = 0;
    const sub = feed.events$.subscribe((e: NormalizedEvent) => {
      if (e.type === 'quote') {
        quotes.set(e.marketId, e);
        quoteEvents++;
      } else if (e.type === 'market') markets.set(e.marketId, e);
    });
    cleanups.push(() => sub.unsubscribe());

    const listed = world.listings(venue.label);
    expect(listed.length).toBeGreaterThan(5);
    expect(listed.some((l) => l.ids['contract_id'] === undefined)).toBe(true);
    const check = (): void => {
      const got = Object.fromEntries(listed.map((l) => [l.id, quotes.get(l.id)?.lastPrice]));
      const want = Object.fromEntries(listed.map((l) => [l.id, probabilityOf(l)]));
      expect(got).toEqual(want);
    };
    await vi.waitFor(check, { timeout: 30_000, interval: 20 });
    for (const l of listed) {
      const q = quotes.get(l.id)!;
      expect(q.yesBid).toBeUndefined();
      expect(q.yesAsk).toBeUndefined();
      expect(markets.get(l.id)).toMatchObject({
        venue: 'venue_d',
        title: l.title,
        eventTitle: l.eventTitle,
        eventId: l.ids['contract_id'] ?? l.id,
        // Manifold has no status field: a market past its closeTime is closed (the world keeps some
        // futures listings active past their close time; Manifold would not).
        status: l.status === 'finalized' || l.status === 'determined' ? 'finalized' : l.closeTime <= Date.now() ? 'closed' : 'active',
      });
    }

    const before = quoteEvents;
    world.tick(3000);
    await vi.waitFor(check, { timeout: 30_000, interval: 20 });
    expect(quoteEvents).toBeGreaterThan(before);

    server.fault({ kind: 'malformed', count: 3 });
    await vi.waitFor(() => expect(feed.stats.malformedTotal).toBeGreaterThanOrEqual(3), { timeout: 30_000, interval: 20 });
    server.fault({ kind: 'disconnect' });
    world.tick(2000);
    await vi.waitFor(check, { timeout: 30_000, interval: 20 });
    expect(feed.stats.malformed.get('market')).toBeGreaterThanOrEqual(2);
    expect(feed.stats.malformed.get('http_schema')).toBeGreaterThanOrEqual(1);
  });
});
