import { toCents } from '../../core/price.js';
import type { ServedGroup } from '../../matching/service.js';
import type { EngineState } from '../../state/engine.js';
import type { VenueDirectory } from '../../venues/directory.js';
import { cents, marketJson } from '../../views/market.js';
import type { EventRec } from './event-index.js';
import { typesMatch, type Cls } from './shared.js';

/** Match groups, their legs and events as the matching routes serve them. */
export class GroupViews {
  /** The price-free part of a leg, rebuilt only when the market record changes (URLs and ids cost more than prices). */
  private readonly legStatic = new Map<string, { at: number; ticker: string; url: string | null; status: string }>();

  constructor(
    private readonly state: EngineState,
    private readonly venues: VenueDirectory,
  ) {}

  /** One member market of a group; undefined when the catalog no longer holds it. */
  leg(key: string, inverted: boolean, confidence: number, reasons: readonly string[], withPrices: boolean): Record<string, unknown> | undefined {
    const rec = this.state.catalog.byKey(key);
    if (!rec) return undefined;
    const v = this.venues.byLabel.get(rec.venue)!;
    let st = this.legStatic.get(key);
    if (!st || st.at !== rec.updatedAt) {
      const m = marketJson(v, rec, undefined);
      this.legStatic.set(key, (st = { at: rec.updatedAt, ticker: m.ticker_name, url: m.url, status: m.status }));
    }
    const leg: Record<string, unknown> = {
      platform: v.slug,
      market_id: rec.marketId,
      ticker_name: st.ticker,
      title: rec.title,
      event_title: rec.eventTitle ?? null,
      outcome: rec.outcome ?? null,
      status: st.status,
      inverted,
      confidence,
      reasons,
      url: st.url,
      // The names clients of the hosted API read (README "Clients of the hosted API").
      source: v.slug,
      source_url: st.url,
      id: rec.marketId,
    };
    if (withPrices) {
      const q = this.state.quotes.get(rec.venue, rec.marketId);
      const m = marketJson(v, rec, q);
      Object.assign(leg, { yes_bid: m.yes_bid, yes_ask: m.yes_ask, no_bid: m.no_bid, no_ask: m.no_ask, last_price: m.last_price, volume: m.volume });
    }
    return leg;
  }

  /** A match group with its legs (`markets`) and one `market_url_<platform>` per venue. */
  group(g: ServedGroup, withPrices = true): Record<string, unknown> {
    const legs = g.members.map((m) => this.leg(m.key, m.inverted, m.confidence, m.reasons, withPrices)).filter((x) => x !== undefined);
    const out: Record<string, unknown> = {
      group_id: g.group_id,
      title: g.title,
      market_class: g.market_class,
      market_type: g.market_type,
      period: g.period,
      line: g.line,
      side: g.side,
      player: g.player,
      team: g.team,
      event_id: g.event_id ?? g.eventKey,
      event_name: g.event_name,
      game_title: g.game_title,
      event_date: g.event_date,
    };
    if (g.suspect !== undefined) Object.assign(out, { suspect: true, suspect_reason: g.suspect });
    for (const l of legs) if (l['url']) out[`market_url_${l['platform'] as string}`] ??= l['url'];
    const platforms = [...new Set(legs.map((l) => l['platform'] as string))];
    out['platforms'] = platforms;
    out['platform_count'] = platforms.length;
    out['markets'] = legs;
    return out;
  }

  /** An event with its groups of `types`; /search prices legs by its own rule (`searchPrices`). */
  event(e: EventRec, includeGroups: boolean, types: Cls[] | 'all' | undefined, withPrices: boolean, searchPrices = false): Record<string, unknown> {
    const groups = e.groups.filter((g) => typesMatch(g, types));
    const out: Record<string, unknown> = {
      event_id: e.event_id,
      title: e.title,
      event_type: e.event_type,
      status: e.completed ? 'completed' : 'active',
      tags: e.tags,
      date: e.date,
      group_count: groups.length,
      id: e.event_id,
      event_name: e.title,
      event_date: e.date,
    };
    if (includeGroups)
      out['groups'] = groups.map((g) => {
        const j = this.group(g, withPrices && !searchPrices);
        if (withPrices && searchPrices) for (const leg of j['markets'] as Record<string, unknown>[]) Object.assign(leg, this.searchPrice(leg, e.completed));
        return j;
      });
    return out;
  }

  /** Spec 2.3 rule 3: mid of best YES bid and ask, null when a side is missing, wider than 20 cents, or the event completed. */
  private searchPrice(leg: Record<string, unknown>, completed: boolean): Record<string, number | null> {
    const rec = this.state.catalog.get(this.venues.bySlug.get(leg['platform'] as string)!.label, leg['market_id'] as string);
    const q = rec ? this.state.quotes.get(rec.venue, rec.marketId) : undefined;
    if (!rec || !q || completed || rec.status !== 'active') return { last_price: null, yes_bid: null, yes_ask: null };
    const bid = q.yesBid;
    const ask = q.yesAsk;
    const mid = bid !== undefined && ask !== undefined && ask - bid <= 2_000 ? toCents(Math.round((bid + ask) / 2)) : null;
    return { last_price: mid, yes_bid: cents(bid), yes_ask: cents(ask) };
  }
}
