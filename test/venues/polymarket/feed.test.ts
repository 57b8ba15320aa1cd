import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { normalizeFile } from '../../../src/cli/normalize.js';
import { loadConfig } from '../../../src/config/load.js';
import { OrderBook } from '../../../src/core/book.js';
import { log } from '../../../src/core/log.js';
import type { FeedEvent, Level, MarketUpsert, NormalizedEvent, Trade } from '../../../src/core/types.js';
import { serve } from '../../../src/sim/protocols/polymarket.js';
import type { SimListing } from '../../../src/sim/types.js';
import { createWorld } from '../../../src/sim/world.js';
import { createPolymarketFeed, TRADE_ROWS_PER_TURN } from '../../../src/venues/polymarket/feed.js';
import { gammaMarketToUpsert, SUSPECT_FRAMES } from '../../../src/venues/polymarket/mappers.js';
import { gammaEventsResponseSchema, gammaMarketSchema } from '../../../src/venues/polymarket/raw.js';
import { countTurns } from '../../support/turns.js';

const cfg = loadConfig({ env: {} });
const venue = cfg.venues.find((v) => v.protocol === 'polymarket')!;
const ingest = { ...cfg.ingest, reconnectMinMs: 20, reconnectMaxMs: 200, heartbeatMs: 1_000, pollMs: 50 };

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function until(what: string, pred: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** What a downstream store does with the feed's events: one book per instrument. */
class Store {
  readonly books = new Map<string, OrderBook>();
  readonly markets = new Map<string, MarketUpsert>();
  readonly trades: Trade[] = [];
  readonly feed: FeedEvent[] = [];
  integrityErrors = 0;

  apply(e: NormalizedEvent): void {
    switch (e.type) {
      case 'book_snapshot': {
        const b = this.books.get(e.instrument) ?? new OrderBook(e.instrument);
        b.snapshot(e.bids, e.asks, e.timestamp);
        this.books.set(e.instrument, b);
        return;
      }
      case 'book_delta':
        try {
          this.books.get(e.instrument)?.apply(e.changes, e.timestamp);
        } catch {
          this.integrityErrors++;
        }
        return;
      case 'market':
        this.markets.set(e.marketId, e);
        return;
      case 'trade':
        this.trades.push(e);
        return;
      case 'feed':
        this.feed.push(e);
        if (e.state === 'disconnected' || e.state === 'stalled' || e.state === 'gap') {
          if (e.instrument) this.books.get(e.instrument)?.reset();
          else for (const b of this.books.values()) b.reset();
        }
    }
  }
}

const levels = (b: OrderBook | undefined): [Level[], Level[]] | undefined => (b?.ready ? [b.bids.levels(), b.asks.levels()] : undefined);
const mirror = (l: SimListing): [Level[], Level[]] => [
  l.book.asks.levels().map(([p, s]): Level => [10_000 - p, s]),
  l.book.bids.levels().map(([p, s]): Level => [10_000 - p, s]),
];

/** Instruments whose book differs from the world's (YES token = listing book, NO token = mirror). */
function diff(store: Store, ls: readonly SimListing[]): string[] {
  const bad: string[] = [];
  for (const l of ls) {
    const yes = l.ids['yes_token']!;
    const no = l.ids['no_token']!;
    if (JSON.stringify(levels(store.books.get(yes))) !== JSON.stringify([l.book.bids.levels(), l.book.asks.levels()])) bad.push(yes);
    if (JSON.stringify(levels(store.books.get(no))) !== JSON.stringify(mirror(l))) bad.push(no);
  }
  return bad;
}

/** Whether a book change moved the best bid or best ask price of the listing's YES book. */
function movedTop(l: SimListing, changes: readonly (readonly [string, number, number, number])[]): boolean {
  const before = (side: 'bid' | 'ask'): number | undefined => {
    const book = side === 'bid' ? l.book.bids : l.book.asks;
    const levels = new Map(book.levels());
    for (const [s, p, , prev] of changes) {
      if (s !== side) continue;
      if (prev === 0) levels.delete(p);
      else levels.set(p, prev);
    }
    const ps = [...levels.keys()];
    return ps.length === 0 ? undefined : side === 'bid' ? Math.max(...ps) : Math.min(...ps);
  };
  return before('bid') !== l.book.bids.best() || before('ask') !== l.book.asks.best();
}

describe('polymarket feed against the simulator', () => {
  it('builds every token book of the world exactly, keeps it through ticks, a disconnect and a gap', async () => {
    const world = createWorld({ seed: 7, venues: cfg.venues });
    const server = await serve(world, venue, { host: '127.0.0.1', port: 0 });
    cleanups.push(() => server.close());
    const feed = createPolymarketFeed({ venue, endpoints: server.endpoints, ingest, log });
    const store = new Store();
    const sub = feed.events$.subscribe((e) => store.apply(e));
    cleanups.push(() => sub.unsubscribe());

    const open = world.listings(venue.label).filter((l) => l.status === 'active' || l.status === 'initialized');
    expect(open.length).toBeGreaterThan(100);
    await until('initial books', () => diff(store, open).length === 0);

    // The catalog: one upsert per open listing, with both tokens and the event title.
    for (const l of open) {
      expect(store.markets.get(l.id)).toMatchObject({
        title: l.title,
        eventTitle: l.eventTitle,
        yesInstrument: l.ids['yes_token'],
        noInstrument: l.ids['no_token'],
        status: 'active',
      });
    }

    world.tick(3_000);
    await until('books after ticks', () => diff(store, open).length === 0);
    expect(store.integrityErrors).toBe(0);

    // Trades: every world trade once, from the data-api, with the taker's wallet.
    const worldTrades = world.trades(venue.label);
    expect(worldTrades.length).toBeGreaterThan(10);
    await until('trades', () => store.trades.length >= worldTrades.length);
    expect(store.trades.length).toBe(worldTrades.length);
    expect(new Set(store.trades.map((t) => t.tradeId)).size).toBe(worldTrades.length);
    const last = worldTrades[worldTrades.length - 1]!;
    expect(store.trades[store.trades.length - 1]).toMatchObject({
      marketId: last.listing.id,
      yesPrice: last.price,
      size: last.size,
      takerSide: last.takerSide,
      taker: last.taker,
      side: 'buy',
    });

    // Disconnect, with the world moving while the feed is away: the fresh books resync it.
    server.fault({ kind: 'disconnect' });
    world.tick(500);
    await until('disconnected', () => store.feed.some((e) => e.state === 'disconnected'));
    await until('books after reconnect', () => diff(store, open).length === 0);
    expect(feed.stats.reconnects).toBe(1);
    expect(store.feed.filter((e) => e.state === 'connected').length).toBe(2);

    // Malformed frames and a duplicate snapshot change nothing.
    server.fault({ kind: 'malformed', count: 5 });
    server.fault({ kind: 'duplicate_snapshot' });
    world.tick(200);
    await until('malformed counted', () => feed.stats.malformedTotal >= 4);
    await until('books after malformed', () => diff(store, open).length === 0);
    expect(Object.fromEntries(feed.stats.malformed)).toMatchObject({ json: 1, book: 1, price_change: 2 });
    expect(feed.stats.unknown.get('order_book_v9')).toBe(1);

    // Gaps: each fault makes the connection lose its next price_change. The mapper can notice only
    // when the loss leaves its copy with another top price than the venue's next changes report
    // (best_bid/best_ask) through SUSPECT_FRAMES further changes: it emits `gap`, the feed cycles
    // the asset and emits `resynced` with the fresh book. Other losses go unseen until a later
    // change at that price or the next `book` (after a trade) repairs them; here a duplicate
    // snapshot repairs those before the next try.
    let lastMiss: unknown;
    for (let attempt = 0; attempt < 60 && feed.stats.gaps === 0; attempt++) {
      let dropped: SimListing | undefined;
      let topMoved = false;
      const off = world.onChange((c) => {
        if (dropped || c.type !== 'book' || c.listing.venue !== venue.label) return;
        dropped = c.listing;
        topMoved = movedTop(c.listing, c.changes);
      });
      server.fault({ kind: 'gap' });
      for (let i = 0; i < 100_000 && !dropped; i++) world.tick(1);
      off();
      if (topMoved) {
        // The listing's next changes carry the venue's top: the first raises the warning, the
        // SUSPECT_FRAMES after it make it a gap if the disagreement lasts.
        const l = dropped!;
        for (let n = 0; n <= SUSPECT_FRAMES; n++) {
          const v = l.version;
          for (let i = 0; i < 100_000 && l.version === v; i++) world.tick(1);
        }
        // a miss is expected now and then (the next try repairs and retries); the last one is reported if all fail
        await until('the next change', () => feed.stats.gaps > 0 || diff(store, [l]).length === 0, 300).catch((e: unknown) => (lastMiss = e));
      }
      if (feed.stats.gaps === 0) server.fault({ kind: 'duplicate_snapshot' });
      await until('books after gap', () => diff(store, open).length === 0);
    }
    expect(feed.stats.gaps, `no gap seen in 60 tries; last miss: ${String(lastMiss ?? 'none')}`).toBeGreaterThan(0);
    const gaps = store.feed.filter((e) => e.state === 'gap').map((e) => e.instrument);
    await until('resynced', () => store.feed.some((e) => e.state === 'resynced' && gaps.includes(e.instrument)));
    expect(store.integrityErrors).toBe(0);
  });

  it("emits a trades page's new trades a slice per turn of the event loop, every one once", async () => {
    // A page of hundreds of new trades went out in one task (5–25 ms of the main thread): the
    // frames read meanwhile waited behind it. Turns are counted by an immediate that re-arms itself.
    const world = createWorld({ seed: 11, venues: cfg.venues });
    while (world.trades(venue.label).length < 3 * TRADE_ROWS_PER_TURN) world.tick(1_000);
    const worldTrades = world.trades(venue.label);
    expect(worldTrades.length).toBeLessThanOrEqual(500); // one page: the first poll reads one
    const server = await serve(world, venue, { host: '127.0.0.1', port: 0 });
    cleanups.push(() => server.close());
    const turns = countTurns();
    cleanups.push(() => turns.stop());
    const perTurn = new Map<number, number>();
    const feed = createPolymarketFeed({ venue, endpoints: server.endpoints, ingest: { ...ingest, pollMs: 60_000 }, log });
    const ids: string[] = [];
    const sub = feed.events$.subscribe((e) => {
      if (e.type !== 'trade') return;
      ids.push(e.tradeId);
      perTurn.set(turns.turn, (perTurn.get(turns.turn) ?? 0) + 1);
    });
    cleanups.push(() => sub.unsubscribe());
    await until('trades', () => ids.length >= worldTrades.length);
    expect(ids.length).toBe(worldTrades.length);
    expect(new Set(ids).size).toBe(worldTrades.length);
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(TRADE_ROWS_PER_TURN);
    expect(perTurn.size).toBeGreaterThanOrEqual(3);
  });

  it('detects a stalled connection, reconnects and resyncs when the server talks again', async () => {
    const world = createWorld({ seed: 8, venues: cfg.venues });
    const server = await serve(world, venue, { host: '127.0.0.1', port: 0 });
    cleanups.push(() => server.close());
    const feed = createPolymarketFeed({ venue, endpoints: server.endpoints, ingest: { ...ingest, heartbeatMs: 200 }, log });
    const store = new Store();
    const sub = feed.events$.subscribe((e) => store.apply(e));
    cleanups.push(() => sub.unsubscribe());
    const open = world.listings(venue.label).filter((l) => l.status === 'active' || l.status === 'initialized');
    await until('initial books', () => diff(store, open).length === 0);

    server.fault({ kind: 'stall', ms: 900 });
    world.tick(300);
    await until('stall detected', () => store.feed.some((e) => e.state === 'stalled'));
    await until('books after stall', () => diff(store, open).length === 0);
    expect(feed.stats.reconnects).toBeGreaterThanOrEqual(1);
    expect(store.integrityErrors).toBe(0);
  });

  it('follows markets to their end: market_resolved on the stream, the final record from Gamma', async () => {
    let now = Date.now();
    const world = createWorld({ seed: 7, venues: cfg.venues, now: () => now, ticksPerSecond: 20 });
    const server = await serve(world, venue, { host: '127.0.0.1', port: 0 });
    cleanups.push(() => server.close());
    const feed = createPolymarketFeed({ venue, endpoints: server.endpoints, ingest: { ...ingest, catalogRefreshMs: 150 }, log });
    const store = new Store();
    const statuses: NormalizedEvent[] = [];
    const sub = feed.events$.subscribe((e) => {
      store.apply(e);
      if (e.type === 'market_status') statuses.push(e);
    });
    cleanups.push(
      () => sub.unsubscribe(),
      () => world.stop(),
    );
    const open = world.listings(venue.label).filter((l) => l.status === 'active');
    await until('initial books', () => diff(store, open).length === 0);

    now += 3 * 86_400_000; // three days on: the games of the first days are final and settled
    world.start();
    await until(
      'resolutions',
      () => statuses.length > 0 && open.filter((l) => l.status === 'finalized').every((l) => store.markets.get(l.id)?.status === 'finalized'),
    );
    const done = open.filter((l) => l.status === 'finalized');
    expect(done.length).toBeGreaterThan(10);
    for (const l of done) {
      const result = l.last === 10_000 ? 'yes' : 'no';
      expect(store.markets.get(l.id)).toMatchObject({ status: 'finalized', result, settlementValue: l.last });
    }
    for (const s of statuses) {
      if (s.type !== 'market_status') continue;
      const l = world.listing(venue.label, s.marketId)!;
      expect(s).toMatchObject({ status: 'finalized', result: l.last === 10_000 ? 'yes' : 'no' });
    }
  });
});

describe('crossbook normalize of a recorded market channel', () => {
  it('--markets with the Gamma /markets list it was recorded against (SYNTHETIC DATA): trades carry YES price and taker side', async () => {
    // No real recording of last_trade_price frames whose tokens a real Gamma response names is at
    // hand, so the simulator (which speaks the real wire formats) records both.
    const world = createWorld({ seed: 11, venues: cfg.venues });
    const server = await serve(world, venue, { host: '127.0.0.1', port: 0 });
    cleanups.push(() => server.close());
    const gamma = server.endpoints.extra!['gamma']!;
    const markets = (await (await fetch(`${gamma}/markets?active=true&closed=false&limit=500`)).json()) as { clobTokenIds: string }[];
    expect(markets.length).toBeGreaterThan(10);
    const assets = markets.flatMap((m) => JSON.parse(m.clobTokenIds) as string[]);
    const frames: string[] = [];
    const ws = new WebSocket(server.endpoints.ws!);
    cleanups.push(() => ws.close());
    ws.on('message', (d) => frames.push(d.toString()));
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ assets_ids: assets, type: 'market' }));
    await until('books', () => frames.length > 0);
    const before = world.trades(venue.label).length;
    world.tick(3_000);
    const traded = world.trades(venue.label).slice(before);
    expect(traded.length).toBeGreaterThan(3);
    await until('trade frames', () => frames.filter((f) => f.includes('"last_trade_price"')).length >= traded.length);

    const dir = mkdtempSync(join(tmpdir(), 'cb-normm-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'frames.jsonl'), `${frames.join('\n')}\n`);
    writeFileSync(join(dir, 'markets.json'), JSON.stringify(markets));
    const run = (list?: string): { out: Record<string, unknown>[]; err: string[] } => {
      const out: string[] = [];
      const err: string[] = [];
      normalizeFile(
        cfg,
        'polymarket',
        join(dir, 'frames.jsonl'),
        { markets: list },
        (s) => out.push(s),
        (s) => err.push(s),
      );
      return { out: out.map((l) => JSON.parse(l) as Record<string, unknown>), err };
    };
    const r = run(join(dir, 'markets.json'));
    expect(r.err[0]).toBe(`market list: ${markets.length} markets learned`);
    expect(r.err.join('\n')).not.toMatch(/no known market/);
    const trades = r.out.filter((t) => t['type'] === 'trade');
    expect(trades.map((t) => [t['marketId'], t['yesPrice'], t['size'], t['takerSide']])).toEqual(
      traded.map((t) => [t.listing.id, t.price, t.size, t.takerSide]),
    );
    // The same frames without the list: the same trades, side unknown.
    const bare = run().out.filter((t) => t['type'] === 'trade');
    expect(bare.map((t) => [t['takerSide'], t['yesPrice']])).toEqual(traded.map(() => ['unknown', null]));
  });
});

describe('Gamma catalog walk, page by page', () => {
  /** Real Gamma documents (test/fixtures/SOURCES.md) served from a loopback server; `list` says what `/markets` lists. */
  async function gammaServer(list: () => unknown[], byCondition: (id: string) => unknown): Promise<{ gamma: string; close: () => Promise<void> }> {
    const { createServer } = await import('node:http');
    const events = JSON.parse(readFileSync(join(fixtures, 'gamma_events_democratic_nominee_2028.json'), 'utf8')) as unknown[];
    const srv = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      const first = (u.searchParams.get('offset') ?? '0') === '0';
      const cids = u.searchParams.getAll('condition_ids');
      const body = u.pathname === '/gamma/events' ? (first ? events : []) : cids.length ? cids.map(byCondition) : first ? list() : [];
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const { port } = srv.address() as { port: number };
    return { gamma: `http://127.0.0.1:${port}/gamma`, close: () => new Promise((r) => srv.close(() => r())) };
  }
  const fixtures = join(import.meta.dirname, '../../fixtures/polymarket');
  const read = (f: string): Record<string, unknown> => JSON.parse(readFileSync(join(fixtures, f), 'utf8')) as Record<string, unknown>;
  const untimed = (u: MarketUpsert): Omit<MarketUpsert, 'timestamp' | 'localTimestamp'> => {
    const { timestamp: _t, localTimestamp: _l, ...rest } = u;
    return rest;
  };

  it('publishes the list first (with its events looked up), then the events’ markets the list lacked; a market that leaves is fetched to its end', async () => {
    const raw = JSON.parse(readFileSync(join(fixtures, 'gamma_events_democratic_nominee_2028.json'), 'utf8')) as { markets: Record<string, unknown>[] }[];
    const [event] = gammaEventsResponseSchema.parse(raw);
    const nested0 = event!.markets![0]!;
    const btc = read('gamma_market_btc_updown_5m.json');
    // The list carries the event's second market in its own version (another question text, the event as a ref).
    const rawNested1 = raw[0]!.markets[1]!;
    const listed1 = {
      ...rawNested1,
      question: `${String(rawNested1['question'])} (as listed)`,
      events: [{ id: event!.id, slug: event!.slug, title: event!.title }],
    };
    let withBtc = true;
    const server = await gammaServer(
      () => (withBtc ? [listed1, btc] : [listed1]),
      (id) => (id === btc['conditionId'] ? { ...btc, closed: true, active: true, umaResolutionStatus: 'resolved', outcomePrices: '["1", "0"]' } : undefined),
    );
    cleanups.push(server.close);
    const endpoints = { rest: server.gamma, ws: 'ws://127.0.0.1:9/ws/market', extra: { gamma: server.gamma } };
    const feed = createPolymarketFeed({ venue, endpoints, ingest: { ...ingest, catalogRefreshMs: 50, reconnectMinMs: 60_000 }, log });
    const markets: MarketUpsert[] = [];
    let walks = 0;
    const sub = feed.events$.subscribe((e) => {
      if (e.type === 'market') markets.push(e);
      else if (e.type === 'feed' && e.state === 'catalog' && ++walks === 1) withBtc = false;
    });
    cleanups.push(() => sub.unsubscribe());
    await until('two walks', () => walks >= 2);

    const parent = { ...event! };
    const expected = [
      gammaMarketToUpsert(venue, gammaMarketSchema.parse(listed1), parent, 0)!,
      gammaMarketToUpsert(venue, gammaMarketSchema.parse(btc), undefined, 0)!,
      gammaMarketToUpsert(venue, nested0, parent, 0)!,
    ].map(untimed);
    // First walk: each market once, the list's version where the list has it; the runtime passes only changes after.
    expect(markets.slice(0, 3).map(untimed)).toEqual(expected);
    const ended = markets.slice(3);
    expect(ended.map((u) => [u.marketId, u.status, u.result])).toEqual([[expected[1]!.marketId, 'finalized', 'yes']]);
  });
});
