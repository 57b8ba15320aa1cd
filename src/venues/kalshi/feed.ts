import { createPrivateKey, constants as cryptoConstants, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { MarketStatus, NormalizedEvent } from '../../core/types.js';
import { signedHeaders } from '../common/auth.js';
import { getJson, url } from '../common/http.js';
import { createVenueFeed, type FeedRuntime, type FeedSession, type RuntimeOptions, type Stream } from '../common/runtime.js';
import { venueMarketId, type FeedContext, type VenueFeed } from '../protocol.js';
import { KalshiMapper, type ResyncRequest } from './mappers.js';
import { isWsError, isWsFrame, kalshiSeriesListSchema, type KalshiCommand } from './raw.js';

/**
 * The Kalshi feed: REST catalog discovery, then one WebSocket with every market's book, ticker and
 * trades, and the lifecycle channel.
 *
 * 1. Catalog: `GET /series` (categories, tags, fees), `GET /events?status=open|closed` (event
 *    titles; settled ones as below), then `GET /markets` walked by cursor once per status filter (`unopened`, `open`,
 *    `closed`, and `settled` limited to markets that closed within `settledLookbackMs`, because
 *    the full settled history is enormous). Every document goes through the mapper, which turns
 *    markets into `market` upserts; the runtime emits only those that changed since last emitted. A
 *    successful walk emits `feed` 'catalog'. It repeats every `ingest.catalogRefreshMs`, and new
 *    markets found by a walk (or announced by a lifecycle `created` frame) are subscribed.
 * 2. Stream: on every (re)connect the mapper is reset (`feed` 'connected'), `market_lifecycle_v2`
 *    is subscribed once (it takes no market filter) and `orderbook_delta` + `ticker` + `trade` are
 *    subscribed for every tradable market in chunks of `chunkSize` tickers. Combo (multivariate)
 *    markets are listed but not subscribed: the real venue has vast numbers of them.
 * 3. Resync: whenever the mapper reports markets waiting for a snapshot (sequence gap, integrity
 *    failure) the feed sends `update_subscription` `get_snapshot` for them on their sid; still
 *    waiting after `resyncRetryMs` → asked again. If the venue refuses get_snapshot (an `error`
 *    answering that command) the markets are moved to a fresh subscription instead
 *    (`delete_markets` on the old sid, `subscribe` anew). The mapper emits `feed` 'resynced' when
 *    the snapshot arrives.
 * 4. Disconnect: `feed` 'disconnected' once per outage, the mapper is reset, and the socket
 *    reconnects with backoff (stall detection by ping in reconnectingSocket).
 *
 * Live mode: the real WebSocket requires signed headers. When KALSHI_API_KEY_ID and
 * KALSHI_PRIVATE_KEY (PEM) or KALSHI_PRIVATE_KEY_PATH are set, the handshake carries
 * KALSHI-ACCESS-KEY / -TIMESTAMP / -SIGNATURE (RSA-PSS SHA-256 over timestamp + "GET" + path), see
 * `kalshiAuthHeaders`. The public REST market data needs no key.
 */

export interface KalshiFeedOptions {
  /** Tickers per subscribe command. */
  readonly chunkSize?: number;
  /** Ask again for a snapshot still missing after this long. */
  readonly resyncRetryMs?: number;
  /** How far back the catalog walk looks for settled markets (by close time). */
  readonly settledLookbackMs?: number;
  /** Environment for the auth headers (defaults to process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** How the runtime reaches the network (a bench hands in its own WebSocket). */
  readonly runtime?: RuntimeOptions;
}

/**
 * Kalshi API-key headers for the WebSocket handshake (RSA-PSS SHA-256 over timestamp + GET +
 * path, signed afresh per connection attempt), or undefined when no key is configured.
 */
export function kalshiAuthHeaders(wsUrl: string, env: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> | undefined {
  const keyId = env['KALSHI_API_KEY_ID'];
  const pem = env['KALSHI_PRIVATE_KEY'] ?? (env['KALSHI_PRIVATE_KEY_PATH'] ? readFileSync(env['KALSHI_PRIVATE_KEY_PATH'], 'utf8') : undefined);
  if (!keyId || !pem) return undefined;
  const key: KeyObject = createPrivateKey(pem);
  const sig = (m: Buffer): Buffer =>
    sign('sha256', m, { key, padding: cryptoConstants.RSA_PKCS1_PSS_PADDING, saltLength: cryptoConstants.RSA_PSS_SALTLEN_DIGEST });
  return signedHeaders(
    { key: 'KALSHI-ACCESS-KEY', timestamp: 'KALSHI-ACCESS-TIMESTAMP', signature: 'KALSHI-ACCESS-SIGNATURE' },
    keyId,
    new URL(wsUrl).pathname,
    sig,
  );
}

const eventsPageShell = z.object({ cursor: z.string().nullable().optional(), events: z.array(z.unknown()).nullable() });
const marketsPageShell = z.object({ cursor: z.string().nullable().optional(), markets: z.array(z.unknown()).nullable() });

/** Most pages one cursor walk may take (a guard against a cursor that never ends). */
const MAX_PAGES = 5_000;
const BOOK_CHANNELS = ['orderbook_delta', 'ticker', 'trade'];

type Options = Required<Omit<KalshiFeedOptions, 'env' | 'runtime'>> & Pick<KalshiFeedOptions, 'env'>;

/** Creates the Kalshi feed of `ctx.venue` (see the module comment). */
export function createKalshiFeed(ctx: FeedContext, opts: KalshiFeedOptions = {}): VenueFeed {
  const o: Options = { chunkSize: 200, resyncRetryMs: 3_000, settledLookbackMs: 7 * 86_400_000, ...opts };
  return createVenueFeed(ctx, 'kalshi', (rt) => kalshiSession(rt, o), opts.runtime);
}

/** One subscription's session: the mapper, the subscription book-keeping and resync, the catalog loop. */
function kalshiSession(rt: FeedRuntime, o: Options): FeedSession {
  const mapper = new KalshiMapper(rt.venue, rt.log, { stats: rt.stats });
  const commands = new Commands();
  const subs = new Subscriptions(commands, o.chunkSize, (id) => venueMarketId(rt.venue, id) ?? id);
  const resync = new Resync(commands, mapper, rt.log, o, () => rt.now());
  let streaming = false;

  /** After the first good catalog walk: the stream and the resync retry timer. */
  const connect = (): void => {
    const wsUrl = rt.endpoints.ws;
    const headers = wsUrl ? kalshiAuthHeaders(wsUrl, o.env) : undefined;
    streaming = true;
    if (!wsUrl) rt.feed('error', 'no WebSocket endpoint configured; catalog only');
    else
      commands.stream = rt.stream({
        url: wsUrl,
        headers,
        onOpen: () => {
          mapper.reset();
          subs.connected();
          resync.connected();
          commands.send({ cmd: 'subscribe', params: { channels: ['market_lifecycle_v2'] } });
          subs.subscribeWanted();
        },
        onClose: () => subs.connected(),
      });
    rt.every(Math.max(50, Math.floor(o.resyncRetryMs / 2)), () => resync.retry());
  };

  return {
    mapper,
    inspect: (raw) => resync.inspect(raw),
    onEvent: (e) => subs.see(e),
    afterFrame: () => {
      // A lifecycle `created` frame announced a market: subscribe it now rather than at the next walk.
      if (subs.added) subs.subscribeWanted();
      const asks = mapper.takeResync();
      if (asks.length > 0) resync.request(asks);
    },
    start: () =>
      rt.catalog(async () => {
        await walkCatalog(rt, o.settledLookbackMs);
        subs.subscribeWanted();
        if (!streaming && !rt.stopped) connect();
        return `${subs.known.size} markets, ${subs.wanted.size} subscribed`;
      }),
  };
}

/** Kalshi commands on the current connection, numbered; dropped while it is not open. */
class Commands {
  stream: Stream | undefined;
  private nextId = 1;

  get open(): boolean {
    return this.stream?.open === true;
  }

  /** The id the next command will carry. */
  get peekId(): number {
    return this.nextId;
  }

  send(c: DistributiveOmit<KalshiCommand, 'id'>): number {
    const id = this.nextId++;
    this.stream?.send(JSON.stringify({ id, ...c }));
    return id;
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * Which markets the book channels should carry: the tradable, non-combo markets (`wanted`), and
 * which of them this connection has subscribed.
 */
class Subscriptions {
  readonly wanted = new Set<string>();
  /** Every market seen in an upsert. */
  readonly known = new Set<string>();
  /** Markets announced since the last subscribeWanted(). */
  added = false;
  private readonly combos = new Set<string>();
  private readonly subscribed = new Set<string>();

  constructor(
    private readonly commands: Commands,
    private readonly chunkSize: number,
    private readonly tickerOf: (marketId: string) => string,
  ) {}

  /** A (re)connect or a close: nothing is subscribed on the connection that comes. */
  connected(): void {
    this.subscribed.clear();
  }

  /** Follows upserts and status changes, so a reconnect does not resubscribe dead markets. */
  see(e: NormalizedEvent): void {
    if (e.type === 'market') {
      const ticker = e.yesInstrument ?? e.marketId;
      this.known.add(e.marketId);
      if (e.extra?.['combo'] === true) this.combos.add(ticker);
      this.want(ticker, e.status);
    } else if (e.type === 'market_status') this.want(this.tickerOf(e.marketId), e.status);
  }

  subscribeWanted(): void {
    this.added = false;
    if (!this.commands.open) return;
    const todo = [...this.wanted].filter((t) => !this.subscribed.has(t));
    for (let i = 0; i < todo.length; i += this.chunkSize) {
      const chunk = todo.slice(i, i + this.chunkSize);
      this.commands.send({ cmd: 'subscribe', params: { channels: BOOK_CHANNELS, market_tickers: chunk } });
      for (const t of chunk) this.subscribed.add(t);
    }
  }

  private want(ticker: string, status: MarketStatus): void {
    if ((status === 'active' || status === 'initialized') && !this.combos.has(ticker)) {
      if (!this.wanted.has(ticker)) {
        this.wanted.add(ticker);
        this.added = true;
      }
    } else this.wanted.delete(ticker);
  }
}

/**
 * Snapshots for markets the mapper reports waiting (sequence gap, integrity failure): asked with
 * `get_snapshot` on their sid, asked again after `resyncRetryMs`; when the venue refuses
 * get_snapshot, moved to a fresh subscription instead.
 */
class Resync {
  private readonly pending = new Map<number, ResyncRequest>();
  private readonly asked = new Map<string, number>();

  constructor(
    private readonly commands: Commands,
    private readonly mapper: KalshiMapper,
    private readonly log: FeedRuntime['log'],
    private readonly o: Options,
    private readonly now: () => number,
  ) {}

  connected(): void {
    this.pending.clear();
    this.asked.clear();
  }

  /** A venue `error` answering one of our get_snapshot commands: resubscribe those markets. */
  inspect(raw: unknown): void {
    if (!isWsFrame(raw) || !isWsError(raw) || typeof raw.id !== 'number') return;
    const r = this.pending.get(raw.id);
    if (!r) return;
    this.pending.delete(raw.id);
    this.log.warn({ code: raw.msg.code, msg: raw.msg.msg }, 'get_snapshot refused; resubscribing those markets');
    this.commands.send({ cmd: 'update_subscription', params: { sids: [r.sid], market_tickers: [...r.tickers], action: 'delete_markets' } });
    this.commands.send({ cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: [...r.tickers] } });
  }

  request(reqs: readonly ResyncRequest[]): void {
    if (!this.commands.open) return;
    const now = this.now();
    const size = this.o.chunkSize;
    for (const r of reqs) {
      for (let i = 0; i < r.tickers.length; i += size) {
        const tickers = r.tickers.slice(i, i + size);
        this.pending.set(this.commands.peekId, { sid: r.sid, tickers });
        for (const t of tickers) this.asked.set(t, now);
        this.commands.send({ cmd: 'update_subscription', params: { sids: [r.sid], market_tickers: tickers, action: 'get_snapshot' } });
      }
    }
    // Answers to get_snapshot are snapshots, not acks: forget old command ids rather than wait.
    const oldest = this.commands.peekId - 1_000;
    for (const id of this.pending.keys()) if (id < oldest) this.pending.delete(id);
  }

  /** Asks again for the snapshots still missing `resyncRetryMs` after they were asked for. */
  retry(): void {
    if (!this.commands.open) return;
    const now = this.now();
    const again: ResyncRequest[] = [];
    for (const r of this.mapper.awaiting()) {
      const tickers = r.tickers.filter((t) => now - (this.asked.get(t) ?? 0) >= this.o.resyncRetryMs);
      if (tickers.length > 0) again.push({ sid: r.sid, tickers });
    }
    if (again.length > 0) this.request(again);
  }
}

/**
 * One catalog walk: series, then events and markets by status filter, every page through the
 * frame path (the mapper turns them into upserts). Rejects on the first failed request.
 */
async function walkCatalog(rt: FeedRuntime, settledLookbackMs: number): Promise<void> {
  // Through the frame path like the pages after it (the mapper learns the series from it), so the
  // capture holds it and a replay's mapper knows the fees and frequency live's did.
  rt.frame(await getJson(url(rt.endpoints.rest, 'series'), kalshiSeriesListSchema), rt.now());
  const minClose = Math.floor((rt.now() - settledLookbackMs) / 1000);
  for (const f of [{ status: 'open' }, { status: 'closed' }, { status: 'settled', min_close_ts: minClose }]) {
    await walk(rt, 'events', { ...f, limit: 200 }, eventsPageShell, (doc) => rt.frame({ events: doc.events ?? [] }, rt.now()));
  }
  for (const f of [{ status: 'unopened' }, { status: 'open' }, { status: 'closed' }, { status: 'settled', min_close_ts: minClose }]) {
    await walk(rt, 'markets', { ...f, limit: 1000 }, marketsPageShell, (doc) => rt.frame({ markets: doc.markets ?? [] }, rt.now()));
  }
}

/** Walks one cursor-paginated listing, handing every page to `page`. */
async function walk<T extends { cursor?: string | null | undefined }>(
  rt: FeedRuntime,
  path: string,
  query: Record<string, string | number | undefined>,
  schema: z.ZodType<T>,
  page: (doc: T) => void,
): Promise<void> {
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (let n = 0; n < MAX_PAGES && !rt.stopped; n++) {
    const doc = await getJson(url(rt.endpoints.rest, path, { ...query, cursor }), schema);
    page(doc);
    const next = doc.cursor ?? '';
    if (next === '' || seen.has(next)) return;
    seen.add(next);
    cursor = next;
  }
}
