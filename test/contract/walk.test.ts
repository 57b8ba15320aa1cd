import { MAX_HEAD_BYTES } from '../../src/server/guard.js';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contract } from './document.js';
import { startRunning, type Running } from './service.js';
import { checkServerMessage } from './ws.js';

/**
 * The OpenAPI document against a running service (issue 15): every route is called with good
 * inputs, with each parameter made invalid in turn, without a key and with another method, and
 * every answer must agree with the document (status, content type, body). Each value an enum
 * parameter documents must be accepted; each value the document rules out must be a 400. The
 * WebSocket's messages are checked against their component schemas.
 */
let run: Running;
let contract: Contract;
let doc: Doc;
const problems: string[] = [];

type Schema = Record<string, unknown>;
interface Param {
  name: string;
  in: 'query' | 'path';
  required: boolean;
  schema: Schema;
}
interface Doc {
  paths: Record<string, { get: { parameters?: Param[]; security: unknown[]; responses: Record<string, unknown> } }>;
}

/** Values of the running service to fill required parameters with. */
let sample: Record<string, string>;

beforeAll(async () => {
  run = await startRunning();
  doc = (await (await fetch(`${run.base}/openapi.json`)).json()) as Doc;
  contract = new Contract(doc as unknown as Record<string, unknown>, run.base);
  sample = await samples(run);
}, 60_000);

afterAll(async () => {
  await run?.close();
});

/** Calls a path under the base and checks the answer against the document. */
async function call(path: string, init: { key?: string | false; method?: string } = {}): Promise<{ status: number; body: unknown }> {
  const key = init.key === undefined ? run.key : init.key;
  const r = await fetch(`${run.base}${path}`, { method: init.method ?? 'GET', headers: key === false ? {} : { 'x-api-key': key } });
  const text = await r.text();
  let body: unknown = text;
  if ((r.headers.get('content-type') ?? '').startsWith('application/json')) body = JSON.parse(text) as unknown;
  const method = init.method ?? 'GET';
  if (method === 'GET') problems.push(...contract.check({ path, status: r.status, contentType: r.headers.get('content-type'), body }));
  else if (r.status !== 405) problems.push(`${method} ${path} → ${r.status}, documented: 405`);
  return { status: r.status, body };
}

/** Market ids, tokens, wallets, groups and a URL the simulated venues hold now. */
async function samples(r: Running): Promise<Record<string, string>> {
  const { state, matching } = r.svc;
  const board = (await (await fetch(`${r.base}/venue_b/leaderboard?limit=1`, { headers: { 'x-api-key': r.key } })).json()) as {
    leaderboard: { wallet: string }[];
  };
  const markets = [...state.catalog.venue('venue_a').values()];
  const withSeries = markets.find((m) => m.seriesTitle !== undefined && m.category !== undefined) ?? markets[0]!;
  const b = [...state.catalog.venue('venue_b').values()].find((m) => m.yesInstrument && /^0x[0-9a-f]{64}$/i.test(m.marketId))!;
  const group = [...matching.served()][0]!;
  const wallet = board.leaderboard[0]?.wallet ?? `0x${'1'.repeat(40)}`;
  return {
    ticker: markets[0]!.marketId,
    category: withSeries.category ?? 'Sports',
    condition_id: b.marketId,
    token_id: b.yesInstrument!,
    address: wallet,
    group_id: String(group.group_id),
    market_id: markets[0]!.marketId,
    url: markets[0]!.url ?? `https://kalshi.com/markets/${markets[0]!.marketId}`,
    // A well-formed id no opportunity has (a fills replay per walk step would be minutes): the 404.
    opportunity_id: 'arb_0_0_0',
  };
}

/** A good value of a parameter: a sample of the running service, else the schema's default or first enum value. */
function good(route: string, p: Param): string | undefined {
  if (route === '/matching-markets' && p.name !== 'q') return undefined;
  if (route === '/matching-markets' && p.name === 'q') return 'Seahawks';
  if (p.name === 'platform' && p.required) return route === '/orderbook' ? 'venue_a' : 'venue_a';
  if (p.name === 'sport') return 'nfl';
  // The last minute of the capture log the running service writes.
  if (route === '/replay' && (p.name === 'from' || p.name === 'to')) return String(p.name === 'from' ? Date.now() - 60_000 : Date.now());
  if (p.name === 'q' && p.required) return 'Seahawks';
  if (p.name === 'ids') return `venue_a:${sample['market_id']}`;
  if (sample[p.name] !== undefined && (p.required || p.in === 'path')) return sample[p.name];
  return undefined;
}

/** Values the document rules out for a parameter (each must be a 400). */
function bad(p: Param): string[] {
  const s = p.schema;
  const out: string[] = [];
  if (s['type'] === 'integer') out.push('x1', String(Number(s['maximum'] ?? 1e15) + 1));
  if (s['type'] === 'number') out.push('abc', String(Number(s['minimum'] ?? 0) - 1));
  if (Array.isArray(s['enum'])) out.push('not_a_value');
  if (s['type'] === 'string' && typeof s['maxLength'] === 'number') out.push('a'.repeat((s['maxLength'] as number) + 1));
  if (s['type'] === 'string' && typeof s['pattern'] === 'string') {
    const re = new RegExp(s['pattern'] as string);
    for (const v of ['', ',', 'a,,b', '!!', 'zz-top']) if (!re.test(v)) out.push(v);
  }
  if (Array.isArray(s['anyOf'])) out.push('maybe-not');
  return out;
}

function queryOf(q: Record<string, string>): string {
  const parts = Object.entries(q).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

describe('the OpenAPI document against a running service', () => {
  it('documents a 200 schema with named fields and the pipeline statuses of every keyed route', () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      // /ws: the upgrade; /ws-token: the one POST route (test/ws/login.test.ts)
      if (path === '/ws' || path === '/ws-token') continue;
      const op = item.get;
      const ok = op.responses['200'] as { content: Record<string, { schema: Schema }> };
      const [type, media] = Object.entries(ok.content)[0]!;
      if (type === 'application/json') expect(Object.keys((media.schema['properties'] as Schema | undefined) ?? {}).length, path).toBeGreaterThan(0);
      for (const s of ['400', '405', '500']) expect(op.responses, `${path} ${s}`).toHaveProperty(s);
      if (op.security.length) for (const s of ['401', '429']) expect(op.responses, `${path} ${s}`).toHaveProperty(s);
    }
  });

  it('agrees with every answer to good and bad inputs, no key and other methods', async () => {
    let calls = 0;
    for (const [template, item] of Object.entries(doc.paths)) {
      if (template === '/ws' || template === '/ws-token') continue;
      const params = item.get.parameters ?? [];
      const pathOf = (over: Record<string, string> = {}): string =>
        template.replace(/\{([^}]+)\}/g, (_, n: string) =>
          encodeURIComponent(
            over[n] ??
              good(
                template,
                params.find((p) => p.name === n)!,
              ) ??
              'x',
          ),
        );
      const query: Record<string, string> = {};
      for (const p of params) if (p.in === 'query' && p.required) query[p.name] = good(template, p)!;
      if (template === '/matching-markets') query['q'] = 'Seahawks';
      const base = pathOf() + queryOf(query);
      const r = await call(base);
      calls++;
      expect([200, 404, 409, 503], `${base} → ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`).toContain(r.status);
      if (item.get.security.length) {
        expect((await call(base, { key: false })).status, base).toBe(401);
        expect((await call(base, { key: 'pmx_not_a_key' })).status, base).toBe(401);
        // A free key: 403 on the routes its plan blocks (the plan gate comes before the rate limit);
        // elsewhere 200 or 429 (one request a second), either checked against the document.
        const free = await call(base, { key: run.freeKey });
        if (run.svc.plans.free.blocked.some((b) => template === `/${b}`)) expect(free.status, base).toBe(403);
      }
      await call(base, { method: 'POST' });
      for (const p of params) {
        for (const v of bad(p)) {
          const path = p.in === 'path' ? pathOf({ [p.name]: v }) + queryOf(query) : pathOf() + queryOf({ ...query, [p.name]: v });
          if (p.in === 'path' && v === '') continue;
          const b = await call(path);
          calls++;
          // A value too long for the request head is refused before validation (431, documented).
          const expected = path.length > MAX_HEAD_BYTES - 512 ? 431 : 400;
          expect(b.status, `${path.slice(0, 200)} (bad ${p.name}="${v.slice(0, 20)}")`).toBe(expected);
        }
        // Every value an enum documents is accepted.
        for (const v of (p.schema['enum'] as string[] | undefined) ?? []) {
          const path = pathOf() + queryOf({ ...query, [p.name]: v });
          const a = await call(path);
          calls++;
          expect(a.status, `${path} (documented ${p.name}=${v})`).not.toBe(400);
        }
        if (p.in === 'query' && p.required) {
          const rest = { ...query };
          delete rest[p.name];
          expect((await call(pathOf() + queryOf(rest))).status, `${template} without ${p.name}`).toBe(400);
        }
      }
    }
    // The WebSocket path answers a plain GET too: 426 with a key, 401 without.
    expect((await call('/ws')).status).toBe(426);
    expect((await call('/ws', { key: false })).status).toBe(401);
    expect(calls).toBeGreaterThan(100);
    expect(problems).toEqual([]);
  }, 120_000);

  it('agrees with every WebSocket message', async () => {
    const ws = new WebSocket(`${run.url}/api/v2/ws`, { headers: { 'x-api-key': run.key } });
    const seen = new Set<string>();
    const wsProblems: string[] = [];
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as { type: string };
      seen.add(m.type);
      wsProblems.push(...checkServerMessage(m));
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const ids = [...run.svc.state.quotes.all()]
      .filter((q) => q.venue === 'venue_a')
      .slice(0, 20)
      .map((q) => q.marketId);
    ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: [...ids, 'NOPE-1'] }));
    const books = [...run.svc.state.quotes.all()]
      .filter((q) => run.svc.state.books.marketBook(q.venue, q.marketId, 5)?.ready)
      .slice(0, 20)
      .map((q) => `${run.svc.venues.byLabel.get(q.venue)!.slug}:${q.marketId}`);
    ws.send(JSON.stringify({ type: 'subscribe', channel: 'orderbook', market_ids: books }));
    ws.send(JSON.stringify({ type: 'subscribe', channel: 'venue_a_prices', market_ids: ids }));
    ws.send(JSON.stringify({ type: 'subscribe', channel: 'arb' }));
    ws.send(JSON.stringify({ type: 'subscribe', channel: 'ev' }));
    ws.send(JSON.stringify({ type: 'subscribe', channel: 'nope', market_ids: ids }));
    ws.send('{not json');
    ws.send(JSON.stringify({ type: 'ping' }));
    const want = ['welcome', 'subscribed', 'price_update', 'orderbook_update', 'ticker', 'arb', 'warning', 'error', 'pong'];
    await expect.poll(() => want.filter((t) => !seen.has(t)), { timeout: 20_000, interval: 100 }).toEqual([]);
    ws.close();
    expect(wsProblems).toEqual([]);
  }, 60_000);

  it('agrees with every WebSocket message in the hosted dialect (data), alert channels and feed notices included', async () => {
    const ws = new WebSocket(`${run.url}/api/v2/ws`, { headers: { 'x-api-key': run.key } });
    const seen = new Map<string, Record<string, unknown>>();
    const wsProblems: string[] = [];
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as Record<string, unknown>;
      // The first of each type with a data body, else the first of the type.
      if (!seen.has(String(m['type'])) || (m['data'] !== undefined && seen.get(String(m['type']))!['data'] === undefined)) seen.set(String(m['type']), m);
      wsProblems.push(...checkServerMessage(m));
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const ids = [...run.svc.state.quotes.all()]
      .filter((q) => q.venue === 'venue_a')
      .slice(0, 20)
      .map((q) => q.marketId);
    ws.send(JSON.stringify({ action: 'heartbeat' }));
    ws.send(JSON.stringify({ action: 'subscribe', channel: 'prices', market_ids: ids }));
    const books = [...run.svc.state.quotes.all()]
      .filter((q) => run.svc.state.books.marketBook(q.venue, q.marketId, 5)?.ready)
      .slice(0, 20)
      .map((q) => `${run.svc.venues.byLabel.get(q.venue)!.slug}:${q.marketId}`);
    ws.send(JSON.stringify({ action: 'subscribe', channel: 'orderbook', market_ids: books }));
    ws.send(JSON.stringify({ action: 'subscribe', channel: 'venue_a_prices', market_ids: ids }));
    ws.send(JSON.stringify({ action: 'subscribe', channel: 'arb' }));
    ws.send(JSON.stringify({ action: 'subscribe', channel: 'ev' }));
    ws.send(JSON.stringify({ action: 'subscribe', channel: 'smart_money' }));
    ws.send(JSON.stringify({ action: 'subscribe', channel: 'fade_finder' }));
    await expect.poll(() => [...seen.values()].filter((m) => m['type'] === 'subscribed').length, { timeout: 30_000, interval: 50 }).toBeGreaterThan(0);
    // An alert of each feed as the alert engine emits them, and a feed notice on the venue's status topic.
    const t = Date.now();
    for (const [i, type] of (['insider', 'fade'] as const).entries())
      run.svc.alerts.alerts$.next({
        seq: 1_000_000 + i,
        type,
        venue: 'venue_a',
        marketId: ids[0]!,
        token: null,
        outcome: 'yes',
        action: 'buy',
        wallet: null,
        price: 5700,
        size: 2000,
        notional: 5700 * 2000,
        tradeId: `contract-${i}`,
        tradeTimestamp: t,
        createdAt: t,
        reason: 'contract check',
        figures: { hit_rate: 0.8, wallet: null },
      });
    run.svc.ws.onFeedEvent({ type: 'feed', venue: 'venue_a', state: 'degraded', detail: 'contract check', timestamp: t, localTimestamp: t });
    const want = ['price_update', 'orderbook_update', 'ticker', 'arb', 'smart_money', 'fade_finder', 'warning'];
    await expect.poll(() => want.filter((type) => seen.get(type)?.['data'] === undefined), { timeout: 20_000, interval: 100 }).toEqual([]);
    ws.close();
    expect(wsProblems).toEqual([]);
    expect(seen.get('smart_money')).toMatchObject({ channel: 'smart_money', alert_type: 'insider', data: { alert_type: 'insider' } });
    expect(seen.get('fade_finder')).toMatchObject({ channel: 'fade_finder', alert_type: 'fade', data: { alert_type: 'fade' } });
    // The schemas are strict: an alert on the wrong feed, or a field the document does not name in data, disagrees.
    const sm = seen.get('smart_money')!;
    expect(checkServerMessage({ ...sm, alert_type: 'fade' })).not.toEqual([]);
    expect(checkServerMessage({ ...sm, data: { ...(sm['data'] as object), extra: 1 } })).not.toEqual([]);
    expect(checkServerMessage({ ...seen.get('price_update')!, data: { seq: 1 } })).not.toEqual([]);
  }, 120_000);
});
