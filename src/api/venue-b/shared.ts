import type { VenueConfig } from '../../config/schema.js';
import type { Reply } from '../../server/http.js';
import { errorReply, jsonReply } from '../../server/http.js';
import { currentYesPrice, type Outcome, type TokenVolume, type WalletLedger, type WalletRecord, type YesPrice } from '../../signals/wallets.js';
import { MINUTE, type Candle } from '../../state/candles.js';
import type { MarketRecord } from '../../state/catalog.js';
import type { EngineState } from '../../state/engine.js';
import { apiMarketId } from '../../venues/protocol.js';
import type { ApiContext } from '../context.js';
import { z } from 'zod';
import { freshnessShape, time } from '../../views/schemas.js';

/** Outcome token ids are uint256 in decimal. */
export const TOKEN_RE = /^\d{1,78}$/;
/** Condition ids are 32 bytes in 0x-hex. */
export const CONDITION_RE = /^0x[0-9a-fA-F]{64}$/;
/** Wallets (proxy wallets) are 20-byte 0x-hex addresses. */
export const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

/** Path parameters of the venue_b routes, with the patterns their resolvers enforce (400 otherwise). */
export const PATH = {
  token_id: { description: 'outcome token id (decimal, up to 78 digits)', pattern: TOKEN_RE },
  condition_id: { description: 'condition id (0x + 64 hex)', pattern: CONDITION_RE },
  address: { description: 'wallet address (0x + 40 hex), case-insensitive', pattern: ADDRESS_RE },
} as const;

/** The volume fields of a response. */
export const volumeShape = {
  volume: z.number().describe('shares traded'),
  volume_usd: z.number().describe('USD traded'),
  trades: z.number().int().describe('trades'),
};

/** `_meta` of the volume routes. */
export const VolumeMeta = z.object({
  ...freshnessShape,
  cache_ttl_seconds: z.number().describe('how long a response is reused'),
  data_available_from: time('oldest minute of volume held'),
  start_ts: z.number().int().describe('window start, unix seconds'),
  end_ts: z.number().int().describe('window end, unix seconds'),
  default_window_applied: z.boolean().describe('start_ts was omitted: the last 24 hours'),
  start_clamped: z.literal(true).optional().describe('the window starts before data_available_from'),
});

/** The 404 of an unknown token, condition or wallet. */
export const NOT_FOUND = 'Unknown token, condition id or wallet (code not_found)';
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
/** Volume-class responses may be reused this long (spec 4.19, 8). */
export const CACHE_MS = 20_000;
/** Most points (candles, chart buckets) one response carries. */
export const MAX_POINTS = 10_000;

/** Dollars of a price in units times shares, to the cent. */
export const usd = (unitsTimesShares: number): number => Math.round(unitsTimesShares / 100) / 100;
/** ISO time of ms since epoch; null for missing or zero. */
export const iso = (ms: number | undefined): string | null => (ms === undefined || ms === 0 ? null : new Date(ms).toISOString());
/** The 400 of an invalid parameter. */
export const bad = (name: string, message: string): Reply => errorReply(400, `validation.invalid_${name}`, `invalid parameter "${name}": ${message}`);
/** A resolver's answer is a reply (an error to return as is) rather than what it resolved. */
export const isReply = (x: unknown): x is Reply => typeof x === 'object' && x !== null && 'status' in x && 'body' in x;
/** Shares rounded to the millionth, as the venue shows them. */
export const roundShares = (shares: number): number => Math.round(shares * 1e6) / 1e6;

/** Shares, notional and trade count over a window. */
export interface VolumeSum {
  shares: number;
  notional: number;
  trades: number;
}

/** A token path parameter resolved to its market and outcome. */
export interface ResolvedToken {
  readonly token: string;
  readonly marketId: string;
  readonly outcome: Outcome;
  readonly market: MarketRecord | undefined;
}

/** A condition id path parameter resolved to its market (which the catalog may not hold). */
export interface ResolvedCondition {
  readonly conditionId: string;
  readonly marketId: string;
  readonly market: MarketRecord | undefined;
}

/** A time window of volume and candle routes. */
export interface TimeWindow {
  readonly from: number;
  readonly to: number;
  readonly defaulted: boolean;
}

/** A small response cache: entries live `CACHE_MS`, at most `max` of them. */
class TtlCache {
  private readonly m = new Map<string, { at: number; body: Record<string, unknown> }>();
  constructor(private readonly max = 2_000) {}
  get(k: string, now: number): { at: number; body: Record<string, unknown> } | undefined {
    const e = this.m.get(k);
    if (e && now - e.at < CACHE_MS) return e;
    if (e) this.m.delete(k);
    return undefined;
  }
  set(k: string, now: number, body: Record<string, unknown>): void {
    if (this.m.size >= this.max) this.m.delete(this.m.keys().next().value!);
    this.m.set(k, { at: now, body });
  }
}

/**
 * What every venue_b route group reads: the venue (the registry entry with `walletData`), the
 * state and wallet ledger, resolvers of path parameters (400 malformed, 404 unknown) and the 20 s
 * response cache of the volume-class routes.
 */
export class VenueB {
  readonly label: string;
  readonly slug: string;
  readonly tags: readonly string[];
  readonly state: EngineState;
  private readonly cache = new TtlCache();
  // token id → market and outcome, from the catalog (authoritative), rebuilt when it changes.
  private tokenIndex = new Map<string, { marketId: string; outcome: Outcome }>();
  private tokenIndexVersion = -1;

  constructor(
    readonly ctx: ApiContext,
    readonly ledger: WalletLedger,
    readonly venue: VenueConfig,
  ) {
    this.label = venue.label;
    this.slug = venue.slug;
    this.tags = [venue.slug];
    this.state = ctx.state;
  }

  /** The token id of a market's outcome, null when the catalog does not know it. */
  tokenOf(m: MarketRecord | undefined, o: Outcome): string | null {
    return (o === 'yes' ? m?.yesInstrument : m?.noInstrument) ?? null;
  }

  /** Validates a token path parameter and resolves it (400 malformed, 404 unknown). */
  resolveToken(raw: string): ResolvedToken | Reply {
    if (!TOKEN_RE.test(raw)) return bad('token_id', `must be a ${this.slug} outcome token id (a decimal integer of up to 78 digits), got "${clip(raw)}"`);
    const t = this.tokenInfo(raw);
    if (!t) return errorReply(404, 'not_found', `unknown ${this.slug} token id "${clip(raw)}"`);
    return { token: raw, ...t };
  }

  /** Validates a condition id path parameter and resolves its market (400 malformed, 404 unknown). */
  resolveCondition(raw: string): ResolvedCondition | Reply {
    if (!CONDITION_RE.test(raw)) return bad('condition_id', `must be a ${this.slug} condition id (0x followed by 64 hex digits), got "${clip(raw)}"`);
    const marketId = apiMarketId(this.venue, raw);
    const market = this.state.catalog.get(this.label, marketId) ?? this.state.catalog.get(this.label, apiMarketId(this.venue, raw.toLowerCase()));
    if (!market && this.ledger.marketVolumes(this.label, marketId).length === 0)
      return errorReply(404, 'not_found', `unknown ${this.slug} condition id "${clip(raw)}"`);
    return { conditionId: raw, marketId: market?.marketId ?? marketId, market };
  }

  /** Validates a wallet address path parameter and finds its record (400 malformed, 404 never seen). */
  resolveWallet(raw: string): WalletRecord | Reply {
    if (!ADDRESS_RE.test(raw)) return bad('address', `must be a wallet address (0x followed by 40 hex digits), got "${clip(raw)}"`);
    const w = this.ledger.wallet(raw);
    if (!w) return errorReply(404, 'not_found', `no ${this.slug} trades seen for wallet ${raw.toLowerCase()}`);
    return w;
  }

  /** Time window of volume routes: default the last 24 h (spec 4.19); 400 when inverted. */
  window(q: { start_ts?: number | undefined; end_ts?: number | undefined }, now: number): TimeWindow | Reply {
    const to = q.end_ts ?? now;
    const from = q.start_ts ?? to - DAY;
    if (from >= to) return errorReply(400, 'validation.time_range', 'invalid parameters "start_ts"/"end_ts": start_ts must be before end_ts');
    return { from, to, defaulted: q.start_ts === undefined };
  }

  /** `_meta` of the volume routes: watermark, refresh time, lag and the window served. */
  volumeMeta(now: number, w: TimeWindow): Record<string, unknown> {
    const availableFrom = this.ledger.volumeFrom(now);
    return {
      ...this.freshness(now),
      cache_ttl_seconds: CACHE_MS / 1000,
      data_available_from: new Date(availableFrom).toISOString(),
      start_ts: Math.floor(w.from / 1000),
      end_ts: Math.floor(w.to / 1000),
      default_window_applied: w.defaulted,
      ...(w.from < availableFrom ? { start_clamped: true } : {}),
    };
  }

  /** Newest trade materialized, when this response was computed, the lag between them; not yet cached. */
  freshness(now: number): { watermark: string | null; refreshed_at: string; lag_seconds: number | null; cached: false } {
    const wm = this.ledger.watermark.get(this.label);
    return {
      watermark: iso(wm),
      refreshed_at: new Date(now).toISOString(),
      lag_seconds: wm === undefined ? null : Math.max(0, Math.round((now - wm) / 1000)),
      cached: false,
    };
  }

  /**
   * Serves the request from the cache (marking it cached, with its age) or computes and stores it;
   * the key is the path and query without the api_key.
   */
  cached(req: { path: string; rawQuery: string }, compute: (now: number) => Record<string, unknown> | Reply): Reply {
    const key = `${req.path}?${req.rawQuery.replace(/(^|&)api_key=[^&]*/g, '')}`;
    const now = this.ctx.clock.now();
    const hit = this.cache.get(key, now);
    if (hit) {
      const meta = (hit.body['_meta'] ?? {}) as Record<string, unknown>;
      return jsonReply({ ...hit.body, _meta: { ...meta, cached: true, age_seconds: Math.round((now - hit.at) / 1000) } });
    }
    const body = compute(now);
    if (isReply(body)) return body;
    this.cache.set(key, now, body);
    return jsonReply(body);
  }

  /** Volume of one token over [from, to), minute resolution. */
  sumVolume(tv: TokenVolume | undefined, from: number, to: number): VolumeSum {
    const out = { shares: 0, notional: 0, trades: 0 };
    if (!tv) return out;
    for (const [m, b] of tv.buckets) {
      if (m < from - (from % MINUTE) || m >= to) continue;
      out.shares += b.shares;
      out.notional += b.notional;
      out.trades += b.trades;
    }
    out.shares = roundShares(out.shares);
    return out;
  }

  /** The YES price of a market now: settlement, book mid, last trade. */
  yesNow(marketId: string): YesPrice | undefined {
    return currentYesPrice(this.state, this.label, marketId);
  }

  /** One-minute candles of a market in [from, to): persisted ones plus the open one. */
  minutes(marketId: string, from: number, to: number): Candle[] {
    const out = this.ctx.persistence.candles(this.label, marketId, from, to);
    const open = this.state.candles.current(this.label, marketId);
    if (open && open.t >= from && open.t < to && (out.length === 0 || out[out.length - 1]!.t < open.t)) out.push(open);
    return out;
  }

  private tokenInfo(token: string): Omit<ResolvedToken, 'token'> | undefined {
    const catalog = this.state.catalog;
    if (catalog.version !== this.tokenIndexVersion) {
      this.tokenIndex = new Map();
      for (const m of catalog.venue(this.label).values()) {
        if (m.yesInstrument) this.tokenIndex.set(m.yesInstrument, { marketId: m.marketId, outcome: 'yes' });
        if (m.noInstrument) this.tokenIndex.set(m.noInstrument, { marketId: m.marketId, outcome: 'no' });
      }
      this.tokenIndexVersion = catalog.version;
    }
    const hit = this.tokenIndex.get(token) ?? this.ledger.token(this.label, token);
    return hit ? { ...hit, market: catalog.get(this.label, hit.marketId) } : undefined;
  }
}

/** The first 40 characters of a parameter, for error messages. */
function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

/** The volume fields of a response. */
export function volumeJson(s: VolumeSum): Record<string, unknown> {
  return { volume: s.shares, volume_usd: usd(s.notional), trades: s.trades };
}
