import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startService, type Service } from '../../src/service.js';

/**
 * The service with the hosted venue names (CROSSBOOK_VENUE_NAMES=hosted), spoken to as clients of
 * the hosted API speak (issue 16): the WebSocket `action` envelope with heartbeats and the
 * smart_money channel, paging on next_cursor to the end, the arb/EV field names, platform=kalshi.
 * The venues are the embedded simulator on loopback.
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-compat-'));
let svc: Service;
let key: string;
let ws: string;

beforeAll(async () => {
  svc = await startService(
    loadConfig({
      env: { CROSSBOOK_VENUE_NAMES: 'hosted' },
      overrides: { dataDir: dir, server: { host: '127.0.0.1', port: 0, baseUrl: null }, sim: { ticksPerSecond: 400, seed: 7 }, ingest: { pollMs: 300 } },
    }),
  );
  key = svc.demoKey!;
  ws = `${svc.url.replace('http', 'ws')}/api/v2/ws`;
  await vi.waitFor(
    async () => {
      const s = (await (await fetch(`${svc.url}/api/v2/status`)).json()) as { platforms: Record<string, { live_markets: number }> };
      expect(s.platforms['kalshi']?.live_markets).toBeGreaterThan(0);
      expect(s.platforms['polymarket']?.live_markets).toBeGreaterThan(0);
    },
    { timeout: 20_000, interval: 200 },
  );
});
afterAll(async () => {
  await svc?.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = async (path: string): Promise<{ status: number; body: any }> => {
  const r = await fetch(`${svc.url}/api/v2${path}`, { headers: { 'X-API-Key': key } });
  return { status: r.status, body: await r.json() };
};

/** A bot's pager: follows next_cursor (sent back as `param`) until it is null. */
async function walk(path: string, items: string, param = 'cursor'): Promise<{ pages: number; items: any[] }> {
  const out: any[] = [];
  let next: string | null = null;
  let pages = 0;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const r = await get(next === null ? path : `${path}${sep}${param}=${encodeURIComponent(next)}`);
    expect(r.status, path).toBe(200);
    expect(r.body, path).toHaveProperty('next_cursor');
    out.push(...r.body[items]);
    next = r.body.next_cursor;
    pages++;
    expect(pages, `${path}: next_cursor never became null`).toBeLessThan(500);
  } while (next !== null);
  return { pages, items: out };
}

interface Socket {
  readonly sock: WebSocket;
  readonly msgs: Record<string, any>[];
  send(m: unknown): void;
  next(pred: (m: Record<string, any>) => boolean, timeout?: number): Promise<Record<string, any>>;
}

async function open(): Promise<Socket> {
  const sock = new WebSocket(`${ws}?api_key=${key}`);
  const msgs: Record<string, any>[] = [];
  sock.on('message', (d) => msgs.push(JSON.parse(d.toString()) as Record<string, any>));
  await new Promise<void>((resolve, reject) => {
    sock.once('open', () => resolve());
    sock.once('error', reject);
  });
  return {
    sock,
    msgs,
    send: (m) => sock.send(JSON.stringify(m)),
    async next(pred, timeout = 30_000) {
      let found: Record<string, any> | undefined;
      await vi.waitFor(
        () => {
          found = msgs.find(pred);
          expect(found).toBeDefined();
        },
        { timeout, interval: 20 },
      );
      msgs.splice(msgs.indexOf(found!), 1);
      return found!;
    },
  };
}

describe('a WebSocket client of the hosted API', () => {
  it('subscribes with action, heartbeats, and reads channel and data on streamed messages', async () => {
    const s = await open();
    const welcome = await s.next((m) => m.type === 'welcome');
    expect(welcome.channels).toEqual(expect.arrayContaining(['prices', 'arb', 'kalshi_prices', 'smart_money', 'fade_finder']));
    s.send({ action: 'subscribe', channel: 'smart_money' });
    expect(await s.next((m) => m.type === 'subscribed')).toMatchObject({ channel: 'smart_money' });
    s.send({ action: 'subscribe', channel: 'fade_finder' });
    expect(await s.next((m) => m.type === 'subscribed')).toMatchObject({ channel: 'fade_finder' });
    s.send({ action: 'heartbeat' });
    await s.next((m) => m.type === 'pong');
    const markets = (await get('/markets?platform=kalshi&limit=5')).body.markets as { market_id: string }[];
    s.send({ action: 'subscribe', channel: 'prices', market_ids: markets.map((m) => `kalshi:${m.market_id}`) });
    expect(await s.next((m) => m.type === 'subscribed' && m.channel === 'prices')).toMatchObject({ source: 'kalshi' });
    const snap = await s.next((m) => m.type === 'price_update');
    expect(snap).toMatchObject({ channel: 'prices', source: 'kalshi', data: { market_id: snap.market_id, source: 'kalshi' } });
    s.send({ action: 'subscribe', channel: 'arb' });
    await s.next((m) => m.type === 'subscribed' && m.channel === 'arb');
    const arb = await s.next((m) => m.type === 'arb' && m.opportunities.length > 0, 30_000);
    expect(arb).toMatchObject({ channel: 'arb', data: { channel: 'arb', group_id: arb.group_id } });
    const o = arb.data.opportunities[0];
    expect(o).toMatchObject({ group_id: arb.group_id, group_title: expect.any(String), roi_pct: expect.any(Number), total_cost: expect.any(Number) });
    for (const l of o.legs) expect(l.source).toBe(l.platform);
    s.sock.close();
  });

  it('gets an error with a code and a message for an unknown action or channel, and stays connected', async () => {
    const s = await open();
    await s.next((m) => m.type === 'welcome');
    s.send({ action: 'subscribes', channel: 'smart_money' });
    expect(await s.next((m) => m.type === 'error')).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('unknown action') });
    s.send({ action: 'subscribe', channel: 'smartmoney' });
    expect(await s.next((m) => m.code === 'UNKNOWN_CHANNEL')).toMatchObject({ channel: 'smartmoney', message: expect.stringContaining('smart_money') });
    s.send({ action: 'subscribe', channel: 'prices', market_ids: ['venue_a:NOPE'] });
    expect(await s.next((m) => m.code === 'UNKNOWN_ID')).toMatchObject({ market_ids: ['venue_a:NOPE'] });
    s.send({ action: 'heartbeat' });
    await s.next((m) => m.type === 'pong');
    s.sock.close();
  });
});

describe('a REST client of the hosted API', () => {
  it('filters on platform=kalshi and refuses the neutral label', async () => {
    const r = await get('/markets?platform=kalshi&limit=3');
    expect(r.status).toBe(200);
    expect(r.body.markets.every((m: { platform: string }) => m.platform === 'kalshi')).toBe(true);
    const bad = await get('/markets?platform=venue_a');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ success: false, error: expect.stringContaining('platform') });
  });

  it('walks /markets, /events and the kalshi catalog to the end on next_cursor', async () => {
    const first = await get('/markets?platform=kalshi&limit=40');
    expect(first.body.next_cursor).toBe(first.body.cursor);
    const markets = await walk('/markets?platform=kalshi&limit=40', 'markets');
    expect(markets.pages).toBeGreaterThan(1);
    const ids = markets.items.map((m) => m.market_id);
    expect(new Set(ids).size).toBe(ids.length);
    if (first.body.total_count !== null) expect(ids.length).toBe(first.body.total_count);
    const events = await walk('/events?limit=5', 'events');
    const eventsTotal = (await get('/events?limit=5')).body._meta.total_count;
    expect(events.items.length).toBe(eventsTotal);
    expect(events.pages).toBe(Math.max(1, Math.ceil(eventsTotal / 5)));
    const word = String(events.items[0].title)
      .split(/\W+/)
      .find((w) => w.length >= 4)!;
    const search = await walk(`/search?q=${encodeURIComponent(word)}&limit=1&include_prices=false`, 'events');
    expect(search.items.length).toBe((await get(`/search?q=${encodeURIComponent(word)}&limit=1&include_prices=false`)).body._meta.total_count);
    expect(search.items.length).toBeGreaterThan(0);
    const catalog = await walk('/kalshi/markets?limit=50', 'markets');
    expect(catalog.pages).toBeGreaterThan(1);
    expect(new Set(catalog.items.map((m) => m.ticker ?? m.market_id)).size).toBe(catalog.items.length);
  });

  it('gets next_cursor on the alert feeds and on /trades (null on the last page)', async () => {
    for (const path of ['/alerts/smart-money?limit=100', '/alerts/fade-finder?limit=100']) {
      const r = await walk(path, 'alerts');
      expect(r.pages).toBeGreaterThanOrEqual(1);
    }
    const t = await get('/trades?platform=kalshi&limit=5');
    expect(t.status).toBe(200);
    expect(t.body.next_cursor).toBe(t.body.pagination.pagination_key);
    // a bot sends next_cursor back as cursor: /trades takes it as pagination_key
    const trades = await walk('/trades?platform=kalshi&limit=100', 'trades');
    const ids = trades.items.map((x) => x.trade_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect((await get('/trades?cursor=nope')).status).toBe(400);
    const both = await get('/trades?cursor=one&pagination_key=other');
    expect(both.status).toBe(400);
    expect(both.body.error).toContain('two different tokens');
  });

  it('reads arbitrage with the hosted names, filtered to the two venues it trades', async () => {
    let body: any;
    await vi.waitFor(
      async () => {
        body = (await get('/arb?limit=100')).body;
        expect(body.opportunities.length).toBeGreaterThan(0);
      },
      { timeout: 30_000, interval: 250 },
    );
    expect(body).toMatchObject({ delay_seconds: 0, count: body.opportunities.length, as_of: expect.any(String) });
    const slugs = ['kalshi', 'polymarket', 'predictit', 'manifold', 'exchange_e', 'exchange_f', 'polymarket_us', 'prophetx'];
    for (const o of body.opportunities) {
      expect(typeof o.group_id).toBe('number');
      for (const f of ['group_title', 'event_date', 'event_type', 'roi_pct', 'total_cost', 'max_wager_usd', 'detected_at']) expect(o, f).toHaveProperty(f);
      expect(o.roi_pct).toBe(o.roi);
      for (const l of o.legs) {
        expect(slugs).toContain(l.platform);
        expect(l.source).toBe(l.platform);
        for (const f of ['side', 'market_id', 'source_url', 'price', 'liquidity_usd', 'fee_usd']) expect(l, f).toHaveProperty(f);
        // the venues whose records carry no URL link through their template
        if (['exchange_e', 'exchange_f', 'prophetx'].includes(l.platform)) expect(l.source_url).toMatch(/^https:\/\//);
      }
    }
    const pair = body.opportunities[0].legs.map((l: { platform: string }) => l.platform).join(',');
    const filtered = (await get(`/arb?limit=100&platforms=${pair}`)).body;
    const allowed = pair.split(',');
    expect(filtered.opportunities.length).toBeGreaterThan(0);
    for (const o of filtered.opportunities) for (const l of o.legs) expect(allowed).toContain(l.platform);
    expect((await get('/arb?platforms=venue_a')).status).toBe(400);
  });

  it('reads EV with the hosted names', async () => {
    let body: any;
    await vi.waitFor(
      async () => {
        body = (await get('/ev?limit=100')).body;
        expect(body.opportunities.length).toBeGreaterThan(0);
      },
      { timeout: 30_000, interval: 250 },
    );
    expect(body).toMatchObject({ delay_seconds: 0, count: body.opportunities.length });
    for (const o of body.opportunities) {
      for (const f of ['group_id', 'group_title', 'event_date', 'consensus_probability', 'detected_at']) expect(o, f).toHaveProperty(f);
      const [l] = o.legs;
      for (const f of ['platform', 'market_id', 'source_url', 'side', 'price', 'roi_pct', 'ev_usd_per_dollar']) expect(l, f).toHaveProperty(f);
      expect(l.ev_usd_per_dollar).toBeCloseTo(l.roi_pct / 100, 5);
      expect(l.source).toBe(l.platform);
    }
  });
});

/**
 * Round two (issue 33): what a research assistant, a sports-arb bot, a Discord bot and a fade-finder
 * bot read, by the names they read it under.
 */
describe('the fields the second round of hosted clients read', () => {
  it('/markets: id, source_url, expiration_date, created_at and the price object beside the flat fields', async () => {
    for (const p of ['kalshi', 'polymarket']) {
      const r = await get(`/markets?platform=${p}&limit=20`);
      expect(r.status).toBe(200);
      expect(r.body.markets.length).toBeGreaterThan(0);
      for (const m of r.body.markets) {
        expect(m).toMatchObject({ id: m.market_id, source_url: m.url, expiration_date: m.close_time });
        expect(Date.parse(m.created_at)).not.toBeNaN();
        expect(m.price).toEqual({
          yes_bid: m.yes_bid,
          yes_ask: m.yes_ask,
          no_bid: m.no_bid,
          no_ask: m.no_ask,
          last_price: m.last_price,
          volume: m.volume,
          liquidity: m.liquidity,
        });
      }
    }
  });

  it('/events and /search: id, event_name, event_date and total_count; each group platform_count and platforms', async () => {
    const ev = (await get('/events?limit=5')).body;
    expect(ev.total_count).toBe(ev._meta.total_count);
    expect(ev.events.length).toBeGreaterThan(0);
    const word = String(ev.events[0].title)
      .split(/\W+/)
      .find((w: string) => w.length >= 4)!;
    const search = (await get(`/search?q=${encodeURIComponent(word)}&limit=5`)).body;
    expect(search.total_count).toBe(search._meta.total_count);
    for (const e of [...ev.events, ...search.events]) {
      expect(e).toMatchObject({ id: e.event_id, event_name: e.title, event_date: e.date });
      for (const g of e.groups) {
        const venues = [...new Set(g.markets.map((l: { platform: string }) => l.platform))];
        expect(g.platforms).toEqual(venues);
        expect(g.platform_count).toBe(venues.length);
        expect(g.platform_count).toBeGreaterThanOrEqual(2);
      }
    }
  });

  it('/matching-markets: success, count and events[].groups[].markets[] {source, source_url, id} beside groups', async () => {
    const title = String((await get('/events?limit=1')).body.events[0].title);
    const word = title.split(/\W+/).find((w) => w.length >= 4)!;
    const r = await get(`/matching-markets?q=${encodeURIComponent(word)}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, count: r.body.groups.length });
    expect(r.body.count).toBeGreaterThan(0);
    const inEvents = r.body.events.flatMap((e: { groups: { group_id: number }[] }) => e.groups.map((g) => g.group_id));
    expect(inEvents.sort()).toEqual(r.body.groups.map((g: { group_id: number }) => g.group_id).sort());
    for (const e of r.body.events) {
      expect(e.id).toBe(e.event_id);
      expect(typeof e.event_name).toBe('string');
      for (const g of e.groups) {
        expect(g.event_id).toBe(e.event_id);
        for (const l of g.markets) expect(l).toMatchObject({ source: l.platform, source_url: l.url, id: l.market_id });
      }
    }
    // the bad input of the route is unchanged: a 400 with success false
    expect((await get('/matching-markets?q=ab')).body).toMatchObject({ success: false });
  });

  it('/status: each platform has status and last_updated (spec 2.13)', async () => {
    const s = (await (await fetch(`${svc.url}/api/v2/status`)).json()) as {
      platforms: Record<string, { status: string; last_updated: string | null; feed_status: string }>;
    };
    for (const [slug, p] of Object.entries(s.platforms)) {
      expect(['ok', 'stale'], slug).toContain(p.status);
      if (p.feed_status !== 'ok') expect(p.status, slug).toBe('stale');
      if (p.last_updated !== null) expect(Date.parse(p.last_updated)).not.toBeNaN();
    }
    for (const slug of ['kalshi', 'polymarket']) expect(Date.parse(s.platforms[slug]!.last_updated!)).not.toBeNaN();
  });

  it('/prices/history: each candle timestamp (ISO 8601, = t), yes_bid, yes_ask and dollar_volume', async () => {
    const m = (await get('/markets?platform=polymarket&limit=20')).body.markets.find((x: { yes_bid: number | null }) => x.yes_bid !== null);
    let candles: { t: number; timestamp: string; yes_bid: number | null; yes_ask: number | null; dollar_volume: number | null }[] = [];
    await vi.waitFor(
      async () => {
        const r = await get(`/prices/history?platform=polymarket&market_id=${encodeURIComponent(m.market_id)}&interval=1m`);
        expect(r.status).toBe(200);
        candles = r.body.candles;
        expect(candles.some((k) => k.yes_bid !== null)).toBe(true);
      },
      { timeout: 20_000, interval: 250 },
    );
    for (const k of candles) {
      expect(k.timestamp).toBe(new Date(k.t * 1000).toISOString());
      for (const f of ['yes_bid', 'yes_ask', 'dollar_volume']) expect(k).toHaveProperty(f);
      if (k.yes_bid !== null && k.yes_ask !== null) expect(k.yes_bid).toBeLessThanOrEqual(k.yes_ask);
    }
  });

  it('streams fade_finder_update to a hosted-dialect fade_finder subscriber, read as the fade-finder bot reads it', async () => {
    const m = (await get('/markets?platform=polymarket&limit=1')).body.markets[0];
    const hosted = await open();
    const plain = await open();
    await hosted.next((x) => x.type === 'welcome');
    await plain.next((x) => x.type === 'welcome');
    hosted.send({ action: 'subscribe', channel: 'fade_finder' });
    plain.send({ type: 'subscribe', channel: 'fade_finder' });
    await hosted.next((x) => x.type === 'subscribed');
    await plain.next((x) => x.type === 'subscribed');
    const t = Date.now();
    const wallet = '0x00000000000000000000000000000000000fade1';
    // A fade alert as the alert engine raises it: a reliably wrong wallet buys NO at 53.4¢.
    svc.alerts.alerts$.next({
      seq: 9_000_001,
      type: 'fade',
      venue: 'venue_b',
      marketId: m.market_id,
      token: null,
      outcome: 'no',
      action: 'buy',
      wallet,
      price: 5340,
      size: 1000,
      notional: 5340 * 1000,
      tradeId: 'compat-fade-1',
      tradeTimestamp: t,
      createdAt: t,
      reason: 'compat check',
      figures: {},
      walletPnl: -7_500_000,
    });
    const first = await hosted.next((x) => x.channel === 'fade_finder' && x.type === 'fade_finder');
    const msg = await hosted.next((x) => x.channel === 'fade_finder' && x.type === 'fade_finder_update');
    expect(msg.seq).toBe(first.seq);
    // the bot's FadeSignal.from_message
    const outer = msg.data;
    const payload = outer.data;
    const profitable = payload.profitable_wallet;
    expect(outer.market_slug || payload.marketSlug).toBe(m.ticker_name);
    expect(Date.parse(outer.created_at)).toBe(t);
    expect(['YES', 'NO']).toContain(profitable.outcome);
    expect(['BUY', 'SELL']).toContain(profitable.side);
    expect(profitable.price).toBeGreaterThan(0);
    expect(profitable.price).toBeLessThan(1);
    // fading a NO buy at 0.534: the trade to make is YES at 1 − 0.534
    const paperOutcome = profitable.side === 'BUY' ? profitable.outcome : profitable.outcome === 'YES' ? 'NO' : 'YES';
    const paperPrice = profitable.side === 'BUY' ? profitable.price : 1 - profitable.price;
    expect(paperOutcome).toBe('YES');
    expect(paperPrice).toBeCloseTo(0.466, 6);
    expect(payload.losing_wallet).toEqual({ userAddr: wallet, pnl_to_date: -750, outcome: 'NO', side: 'BUY', price: 0.534, amount: 534 });
    // the alert record on the stream carries the trader's lifetime PnL (USD) and side beside outcome
    expect(first).toMatchObject({ lifetime_pnl: -750, smart_lifetime_pnl: -750, side: 'buy', outcome: 'no' });
    // a connection that speaks type gets the fade_finder message and not the hosted shape
    await plain.next((x) => x.type === 'fade_finder' && x.trade_id === 'compat-fade-1');
    hosted.send({ action: 'heartbeat' });
    plain.send({ type: 'ping' });
    await hosted.next((x) => x.type === 'pong');
    await plain.next((x) => x.type === 'pong');
    expect(plain.msgs.filter((x) => x.type === 'fade_finder_update')).toEqual([]);
    // fade_finder_update is a message of the fade_finder channel, not a channel of its own
    hosted.send({ action: 'subscribe', channel: 'fade_finder_update' });
    expect(await hosted.next((x) => x.code === 'UNKNOWN_CHANNEL')).toMatchObject({
      channel: 'fade_finder_update',
      message: expect.stringContaining('fade_finder'),
    });
    hosted.sock.close();
    plain.sock.close();
  });
});
