import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { createLogger } from '../src/core/log.js';
import { startService, type Service } from '../src/service.js';

/**
 * The whole service on the embedded default (simulated venues on loopback), as a new user runs it:
 * every venue live on /status, a demo key, and a restart on the same DATA_DIR serving the same
 * markets at once, before the venues reconnect.
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-service-'));
const config = (): ReturnType<typeof loadConfig> =>
  loadConfig({
    env: {},
    overrides: { dataDir: dir, server: { host: '127.0.0.1', port: 0, baseUrl: null }, sim: { ticksPerSecond: 400, seed: 7 }, ingest: { pollMs: 300 } },
  });
let svc: Service | undefined;
/** The first service's log lines (info and up). */
const lines: string[] = [];

afterAll(async () => {
  await svc?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Status {
  status: string;
  platforms: Record<string, { active_markets: number; live_markets: number; feed_healthy: boolean }>;
  last_updated: string | null;
}

describe('crossbook service on the embedded default', () => {
  let counts: Record<string, number> = {};

  it('shows all eight venues live on /status', async () => {
    svc = await startService(config(), { log: createLogger('info', { write: (l: string) => void lines.push(l) }) });
    expect(svc.demoKey).toMatch(/^pmx_/);
    let s: Status | undefined;
    await vi.waitFor(
      async () => {
        const r = await fetch(`${svc!.url}/api/v2/status`);
        s = (await r.json()) as Status;
        expect(Object.values(s.platforms).every((p) => p.feed_healthy && p.live_markets > 0)).toBe(true);
      },
      { timeout: 15_000, interval: 200 },
    );
    expect(s!.status).toBe('ok');
    expect(Object.keys(s!.platforms)).toEqual(['venue_a', 'venue_b', 'venue_c', 'venue_d', 'venue_e', 'venue_f', 'venue_g', 'venue_h']);
    expect(s!.last_updated).not.toBeNull();
    counts = Object.fromEntries(Object.entries(s!.platforms).map(([k, v]) => [k, v.active_markets]));
    // books are live: venue_a markets get two-sided quotes once their snapshots arrive (the catalog
    // walk, which /status counts, comes first)
    await vi.waitFor(
      () => {
        const quotes = [...svc!.state.quotes.all()].filter((q) => q.venue === 'venue_a' && q.yesBid !== undefined && q.yesAsk !== undefined);
        expect(quotes.length).toBeGreaterThan(10);
      },
      { timeout: 15_000, interval: 200 },
    );
  });

  it('streams prices, live games and arbitrage over the WebSocket, and finds matched events', async () => {
    const key = svc!.demoKey!;
    const events = (await (await fetch(`${svc!.url}/api/v2/events?event_type=sports&limit=100`, { headers: { 'x-api-key': key } })).json()) as {
      events: { event_id: string; groups: { group_id: number; markets: { platform: string; market_id: string }[] }[] }[];
    };
    expect(events.events.length).toBeGreaterThan(3);
    const game = events.events[0]!;
    const market = game.groups[0]!.markets[0]!;
    const ws = new WebSocket(`${svc!.url.replace('http', 'ws')}/api/v2/ws?api_key=${key}`);
    const msgs: Record<string, unknown>[] = [];
    ws.on('message', (d) => msgs.push(JSON.parse(d.toString()) as Record<string, unknown>));
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: [`${market.platform}:${market.market_id}`] }));
    ws.send(JSON.stringify({ type: 'subscribe', channel: 'live_games', event_ids: [game.event_id, 'no-such-game'] }));
    ws.send(JSON.stringify({ type: 'subscribe', channel: 'arb' }));
    await vi.waitFor(
      () => {
        expect(msgs.find((m) => m['type'] === 'subscribed' && m['channel'] === 'live_games')).toMatchObject({ event_ids: [game.event_id] });
        expect(msgs.find((m) => m['code'] === 'UNKNOWN_EVENT_ID')).toMatchObject({ event_ids: ['no-such-game'] });
        expect(msgs.find((m) => m['type'] === 'price_update' && m['snapshot'] === true)).toMatchObject({
          market_id: market.market_id,
          source: market.platform,
        });
        expect(msgs.filter((m) => m['type'] === 'live_game').length).toBeGreaterThan(0);
      },
      { timeout: 15_000, interval: 100 },
    );
    ws.close();
  });

  it('exposes Prometheus metrics behind a key: process, event-loop lag, feeds, WebSocket', async () => {
    expect((await fetch(`${svc!.url}/api/v2/metrics`)).status).toBe(401);
    const r = await fetch(`${svc!.url}/api/v2/metrics`, { headers: { 'x-api-key': svc!.demoKey! } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await r.text();
    const value = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('process_resident_memory_bytes')).toBeGreaterThan(10 * 1024 * 1024);
    expect(value('nodejs_eventloop_lag_p99_seconds')).toBeGreaterThan(0);
    expect(value('crossbook_markets')).toBe(svc!.state.catalog.size);
    expect(text).toMatch(/^crossbook_feed_frames_total\{venue="venue_a"\} [1-9]/m);
  });

  it('documents every endpoint in the OpenAPI document, served without a key', async () => {
    const r = await fetch(`${svc!.url}/api/v2/openapi.json`);
    expect(r.status).toBe(200);
    const doc = (await r.json()) as { info: { version: string }; paths: Record<string, { get: { parameters: unknown[] } }> };
    expect(doc.info.version).toMatch(/^2\./);
    const paths = Object.keys(doc.paths);
    for (const p of [
      '/status',
      '/markets',
      '/prices/history',
      '/prices/bulk',
      '/orderbook',
      '/trades',
      '/arb',
      '/ev',
      '/alerts/smart-money',
      '/alerts/fade-finder',
      '/matching-markets',
      '/matching-markets/url',
      '/matching-markets/sports',
      '/events',
      '/search',
      '/unified-orderbook',
      '/venue_a/markets',
      '/venue_a/markets/{ticker}',
      '/venue_a/series',
      '/venue_b/market-price/{token_id}',
      '/venue_b/candlesticks/{condition_id}',
    ])
      expect(paths, p).toContain(p);
    expect(paths.length).toBeGreaterThanOrEqual(30);
    // The WebSocket protocol, written out where OpenAPI has no words for it.
    const ws = (doc.paths['/ws'] as unknown as { get: { description: string; responses: Record<string, unknown> } }).get;
    expect(Object.keys(ws.responses)).toEqual(expect.arrayContaining(['101', '401']));
    for (const word of [
      'price_update',
      'UNKNOWN_ID',
      'UNKNOWN_EVENT_ID',
      'UNKNOWN_CHANNEL',
      'venue_a_prices',
      'seq',
      'epoch',
      'COALESCED',
      'free: 1 connections',
    ])
      expect(ws.description, word).toContain(word);
  });

  it('serves live arbitrage whose ROI recomputes from its legs, sizes and the fee schedules', async () => {
    const key = svc!.demoKey!;
    type Leg = { platform: string; avg_price: number; size: number; fee: number; side: string };
    type Opp = { roi: number; size: number; cost: number; payout: number; profit: number; legs: Leg[] };
    let opps: Opp[] = [];
    await vi.waitFor(
      async () => {
        const r = await fetch(`${svc!.url}/api/v2/arb?limit=100`, { headers: { 'x-api-key': key } });
        expect(r.status).toBe(200);
        opps = ((await r.json()) as { opportunities: Opp[] }).opportunities;
        expect(opps.length).toBeGreaterThan(0);
      },
      { timeout: 20_000, interval: 250 },
    );
    for (const o of opps) {
      const [y, n] = o.legs as [Leg, Leg];
      expect(y.platform).not.toBe(n.platform);
      expect(y.size).toBe(o.size);
      const cost = (y.avg_price * o.size) / 100 + (n.avg_price * o.size) / 100 + y.fee + n.fee;
      expect(o.cost).toBeCloseTo(cost, 1);
      expect(o.payout).toBe(o.size);
      expect(o.profit).toBeCloseTo(o.payout - o.cost, 3);
      expect(o.roi).toBeCloseTo((o.profit / o.cost) * 100, 1);
      expect(o.roi).toBeGreaterThan(0);
    }
    for (let i = 1; i < opps.length; i++) expect(opps[i - 1]!.roi).toBeGreaterThanOrEqual(opps[i]!.roi);
  });

  it('a restart on the same DATA_DIR serves the same market counts at once', async () => {
    await svc!.close();
    // It stopped its parts the state's snapshot first (what a restart restores), the capture's
    // backlog and the history index's catch-up (which can take minutes at scale) after, and said how long each took.
    const stopped = lines.map((l) => JSON.parse(l) as { msg: string; ms?: Record<string, number> }).find((l) => l.msg === 'stopped');
    expect(Object.keys(stopped!.ms!)).toEqual(['state', 'domain', 'history', 'capture', 'outside', 'store']);
    expect(Object.values(stopped!.ms!).every((ms) => ms >= 0)).toBe(true);
    // Restart with every venue unreachable (live mode at a closed port): what /status shows can
    // only come from disk.
    const c = config();
    const dead = 'http://127.0.0.1:1';
    const venues = c.venues.map((v) => ({
      ...v,
      connection: { mode: 'live' as const, rest: dead, ws: 'ws://127.0.0.1:1', extra: { gamma: dead, data: dead } },
    }));
    svc = await startService({ ...c, venues });
    expect(svc.sim).toBeUndefined();
    const r = await fetch(`${svc.url}/api/v2/status`);
    const s = (await r.json()) as Status;
    for (const [slug, n] of Object.entries(counts)) expect(s.platforms[slug]!.active_markets, slug).toBeGreaterThanOrEqual(n);
    expect(svc.restored.markets).toBeGreaterThanOrEqual(Object.values(counts).reduce((a, b) => a + b, 0));
  });
});
