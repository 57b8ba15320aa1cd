import { z } from 'zod';

export { ErrorFields } from '../access/api.js';

/**
 * Building blocks of the response schemas declared beside each route, and the records several
 * routes share (market, trade, match group, event, alert). Objects are strict: the OpenAPI document
 * says `additionalProperties: false`, so a field the schema does not name fails the contract test.
 */

/** A price in cents (0 to 100). */
export const cents = (description: string) => z.number().describe(`${description} (cents, 0 to 100)`);
/** A price in cents or null when missing. */
export const centsOrNull = (description: string) => z.number().nullable().describe(`${description} (cents, 0 to 100; null when missing)`);
/** An ISO 8601 UTC time. */
export const time = (description: string) => z.string().meta({ format: 'date-time', description });
/** `as_of_ms` of a state read: the receive time (ms since the epoch) of the last event the answer reflects. */
export const asOfMs = (description: string) =>
  z.number().int().nullable().describe(`${description}: receive time (ms since the epoch) of the last event the answer reflects; null when it reflects none`);
/** The `as_of` / `as_of_ms` pair of a state read (`as_of` the same instant as ISO 8601). */
export const asOfFields = (what: string) => ({
  as_of: z
    .string()
    .meta({ format: 'date-time' })
    .nullable()
    .describe(
      `${what}: receive time of the last event the answer reflects, ISO 8601 with ms (pass it back as as_of= where a route takes it); null when it reflects none`,
    ),
  as_of_ms: asOfMs(what),
});
/** The `as_of` / `as_of_ms` values of a receive time (0: none). */
export function asOfOf(ms: number): { as_of: string | null; as_of_ms: number | null } {
  return ms > 0 ? { as_of: new Date(ms).toISOString(), as_of_ms: ms } : { as_of: null, as_of_ms: null };
}
/** An ISO 8601 UTC time or null. */
export const timeOrNull = (description: string) => z.string().meta({ format: 'date-time' }).nullable().describe(`${description}; null when unknown`);
/** A string or null. */
export const strOrNull = (description: string) => z.string().nullable().describe(description);
/** A number or null. */
export const numOrNull = (description: string) => z.number().nullable().describe(description);
/** A non-negative integer count. */
export const count = (description: string) => z.number().int().min(0).describe(description);
/** A venue slug. */
export const platform = z.string().describe('venue slug');
/** An opaque pagination cursor, null on the last page. */
export const cursor = z.string().nullable().describe('opaque token for the next page; null on the last page');

/** The market record (spec 2.3) of /markets. */
export const Market = z
  .object({
    platform,
    market_id: z.string().describe('platform-native market id'),
    title: z.string(),
    series_title: strOrNull('title of the market’s series'),
    event_title: strOrNull('title of the market’s event'),
    ticker_name: z.string().describe('the venue’s human-readable key (slug or ticker)'),
    outcome: strOrNull('outcome of a multi-outcome market'),
    category: strOrNull('category'),
    status: z.enum(['active', 'closed', 'upcoming']),
    close_time: timeOrNull('scheduled close'),
    url: strOrNull('market page URL'),
    yes_bid: centsOrNull('best YES bid'),
    yes_ask: centsOrNull('best YES ask'),
    no_bid: centsOrNull('best NO bid (100 − YES ask)'),
    no_ask: centsOrNull('best NO ask (100 − YES bid)'),
    last_price: centsOrNull('last trade'),
    volume: numOrNull('traded volume as the venue reports it'),
    liquidity: numOrNull('liquidity as the venue reports it'),
    updated_at: timeOrNull('last quote update'),
    id: z.string().describe('= market_id (the name clients of the hosted API read)'),
    source_url: strOrNull('= url'),
    expiration_date: timeOrNull('= close_time'),
    created_at: time('the venue’s open time of the market, else when crossbook first saw it'),
    price: z
      .object({
        yes_bid: centsOrNull('= yes_bid'),
        yes_ask: centsOrNull('= yes_ask'),
        no_bid: centsOrNull('= no_bid'),
        no_ask: centsOrNull('= no_ask'),
        last_price: centsOrNull('= last_price'),
        volume: numOrNull('= volume'),
        liquidity: numOrNull('= liquidity'),
      })
      .describe('the price fields again, grouped as clients of the hosted API read them'),
    rules: z
      .object({ primary: strOrNull('primary resolution rules'), secondary: strOrNull('secondary resolution rules') })
      .optional()
      .describe('with include=rules'),
  })
  .describe('Market');

/** The unified trade record (spec 2.9). */
export const tradeShape = {
  platform,
  trade_id: z.string(),
  market_id: z.string(),
  token_id: z.string().describe('outcome token id (the market id where the venue has none)'),
  side: z.enum(['buy', 'sell']).nullable().describe('taker side on the token; null when unknown'),
  taker_side: z.enum(['yes', 'no']).nullable().describe('outcome the taker bought; null when unknown'),
  price: cents('trade price'),
  shares: z.number().describe('contracts traded'),
  amount_usd: z.number().describe('notional, USD'),
  maker_addr: strOrNull('maker wallet; null on venues without wallets'),
  taker_addr: strOrNull('taker wallet; null on venues without wallets'),
  executed_at: time('execution time'),
  timestamp: z.number().int().describe('execution time, unix seconds'),
};
export const Trade = z.object(tradeShape).describe('Trade');

/** One member market of a match group. */
export const GroupLeg = z
  .object({
    platform,
    market_id: z.string(),
    ticker_name: z.string(),
    title: z.string(),
    event_title: strOrNull('event title'),
    outcome: strOrNull('outcome'),
    status: z.enum(['active', 'closed', 'upcoming']),
    inverted: z.boolean().describe("the market's YES is the group's NO"),
    confidence: z.number().describe('match confidence, 0 to 1'),
    reasons: z.array(z.string()).describe('why the market was matched'),
    url: strOrNull('market page URL'),
    yes_bid: centsOrNull('best YES bid').optional(),
    yes_ask: centsOrNull('best YES ask').optional(),
    no_bid: centsOrNull('best NO bid').optional(),
    no_ask: centsOrNull('best NO ask').optional(),
    last_price: centsOrNull('last trade (on /search: mid of bid and ask, null when wider than 20 cents)').optional(),
    volume: numOrNull('traded volume').optional(),
    source: z.string().describe('= platform (the name clients of the hosted API read)'),
    source_url: strOrNull('= url'),
    id: z.string().describe('= market_id'),
  })
  .describe('GroupLeg');

/** A cross-venue match group with its legs; `market_url_<platform>` per venue. */
export const MatchGroup = z
  .object({
    group_id: z.number().int().describe('stable match-group id'),
    title: z.string(),
    market_class: z.enum(['moneyline', 'spread', 'total', 'player_prop', 'other']).nullable().describe('sports market class; null outside sports'),
    market_type: z.string(),
    period: strOrNull('game period of a sports market'),
    line: numOrNull('spread or total line'),
    side: z.enum(['home', 'away', 'over', 'under']).nullable(),
    player: strOrNull('player of a prop'),
    team: strOrNull('team'),
    event_id: z.string().describe('shared by every group of one real-world event'),
    event_name: strOrNull('event name'),
    game_title: strOrNull('game title'),
    event_date: strOrNull('event date, YYYY-MM-DD'),
    suspect: z.literal(true).optional().describe('the group has a confirmed contradiction (see suspect_reason)'),
    suspect_reason: z.string().optional(),
    platforms: z.array(z.string()).describe('venue slugs of the member markets, each once'),
    platform_count: count('venues of the member markets'),
    markets: z.array(GroupLeg).describe('member markets, on at least two venues'),
  })
  .catchall(z.string().describe('market_url_<platform>: page URL of the group’s market on that venue'))
  .describe('MatchGroup');

/** An event of /events and /search with its groups. */
export const EventJson = z
  .object({
    event_id: z.string(),
    title: z.string(),
    event_type: z.string().describe('sports, politics, economics, crypto, …'),
    status: z.enum(['active', 'completed']),
    tags: z.array(z.string()),
    date: strOrNull('event date, YYYY-MM-DD'),
    group_count: count('groups of the requested types'),
    id: z.string().describe('= event_id (the name clients of the hosted API read)'),
    event_name: z.string().describe('= title'),
    event_date: strOrNull('= date'),
    groups: z.array(MatchGroup).optional().describe('with include_groups=true'),
  })
  .describe('Event');

/** A book level. */
export const Level = z.object({ price: cents('price'), size: z.number().describe('contracts at the price') });

/** An alert figure value. */
export const Figure = z.union([z.number(), z.string(), z.boolean(), z.null()]);

/** The alert record (spec 2.14). */
export const AlertJson = z
  .object({
    alert_id: z.string().describe('alert id, increasing'),
    alert_type: z
      .enum(['smart_money', 'insider', 'captain_hook', 'fade'])
      .describe('smart_money, insider and captain_hook on the smart-money feed; fade on the fade-finder feed'),
    platform,
    market_id: z.string().describe('native market id'),
    token_id: strOrNull('outcome token id'),
    title: strOrNull('market title'),
    outcome: z.enum(['yes', 'no']).describe('outcome traded'),
    side: z
      .enum(['buy', 'sell'])
      .describe(
        'what the trader did with the outcome: buy or sell (not the outcome: that is `outcome`; a client that prints side as the outcome shows BUY BUY)',
      ),
    wallet: strOrNull('wallet; null on venues whose trades carry none'),
    price: cents('trade price of the outcome'),
    shares: z.number().describe('contracts traded'),
    amount_usd: z.number().describe('notional, USD'),
    trade_id: z.string().describe('id of the trade that raised the alert'),
    executed_at: time('trade time'),
    created_at: time('when the alert was raised'),
    timestamp: z.number().int().describe('created_at, unix seconds'),
    reason: z.string().describe('why the alert was raised'),
    figures: z.record(z.string(), Figure).describe('the numbers behind the reason'),
    lifetime_pnl: numOrNull(
      "the trader's realized PnL over all its positions when the alert was raised, USD, as the wallet ledger knows it; null without a wallet (or for alerts raised before it was kept)",
    ),
    smart_lifetime_pnl: numOrNull('= lifetime_pnl (the name clients of the hosted API read)'),
  })
  .describe('Alert');

/** The `_meta` freshness fields of the cached venue_b routes. */
export const freshnessShape = {
  watermark: timeOrNull('newest trade materialized'),
  refreshed_at: time('when this response was computed'),
  lag_seconds: z.number().int().nullable().describe('refreshed_at − watermark, seconds; null before the first trade'),
  cached: z.boolean().describe('served from the 20 s cache'),
  age_seconds: z.number().int().optional().describe('age of a cached response, seconds'),
};

const legShape = {
  platform,
  source: z.string().describe('venue the quote came from'),
  market_id: z.string(),
  side: z.enum(['yes', 'no']).describe("side bought, in the market's own terms"),
  price: cents('best ask of the leg'),
  size: z.number().describe('contracts'),
  fee: z.number().describe('taker fee of the leg, USD'),
  fee_usd: z.number().describe('= fee (the name clients of the hosted API read)'),
  url: z.string().nullable().describe('market page URL; null when unknown'),
  source_url: z.string().nullable().describe('= url'),
};

/** Group fields every published opportunity carries (the names clients of the hosted API read). */
const groupStamp = {
  group_title: z.string().describe('match group title'),
  event_date: z.string().nullable().describe('day of the group’s event, YYYY-MM-DD'),
  event_type: z.string().nullable().describe('kind of event, as /events names it'),
  detected_at: time('first computed, in the unbroken run of recomputes that still lists it'),
};

/** A two-leg arbitrage (spec 2.15): buy YES on one venue and NO on another, net of fees. */
export const ArbOpportunity = z
  .object({
    opportunity_id: z.string().optional().describe('id of this opportunity while it lives (its group, legs and side); closed ones are in /arb/history'),
    group_id: z.number().int(),
    roi: z.number().describe('net ROI, percent: profit / cost × 100, fee-net'),
    roi_pct: z.number().describe('= roi'),
    size: z.number().describe('contracts per leg available at a positive net ROI'),
    cost: z.number().describe('USD paid for both legs, fees included'),
    total_cost: z.number().describe('= cost'),
    max_wager_usd: z.number().describe('USD for both legs at the most profitable size (= cost: a larger bet only adds losing contracts)'),
    payout: z.number().describe('guaranteed payout, USD'),
    profit: z.number().describe('payout − cost, USD'),
    legs: z
      .array(
        z.object({
          ...legShape,
          avg_price: cents('size-weighted average price over the size taken'),
          liquidity_usd: z.number().describe('USD the leg takes at this size'),
        }),
      )
      .length(2),
    ...groupStamp,
  })
  .describe('ArbOpportunity');

/** A positive-EV entry against the cross-venue consensus, net of fees. */
export const EvOpportunity = z
  .object({
    opportunity_id: z.string().optional().describe('id of this opportunity while it lives (its group, leg and side); closed ones are in /ev/history'),
    group_id: z.number().int(),
    side: z.enum(['yes', 'no']).describe("side of the group's YES bought"),
    roi: z.number().describe('net ROI, percent: expected profit per dollar × 100, fee-net'),
    roi_pct: z.number().describe('= roi'),
    ev_per_dollar: z.number().describe('expected profit per dollar spent, fee-net'),
    ev_usd_per_dollar: z.number().describe('= ev_per_dollar (= roi / 100)'),
    consensus: z.number().describe('consensus probability of the side, cents'),
    consensus_probability: z.number().describe('consensus probability of the group’s YES'),
    consensus_sources: z.array(z.string()).describe('venues the consensus comes from'),
    price: cents('best ask'),
    size: z.number().describe('contracts at the ask'),
    fee: z.number().describe('taker fee per contract, USD'),
    legs: z
      .array(
        z.object({
          ...legShape,
          roi_pct: z.number().describe('net ROI of the leg, percent'),
          ev_usd_per_dollar: z.number().describe('expected profit per dollar of the leg'),
        }),
      )
      .length(1),
    ...groupStamp,
  })
  .describe('EvOpportunity');

const SIGNALS_AS_OF = 'receive time of the last event applied to the state the list was computed from (ISO 8601; before any event, the time of the read)';
const signalMeta = {
  count: count('opportunities on this page'),
  total: count('opportunities matching the filters'),
  as_of: time(SIGNALS_AS_OF),
};
const updatedAt = time('when the group’s signals were last computed');

/** The 200 body of /arb. */
const hostedPage = {
  as_of: time(SIGNALS_AS_OF),
  as_of_ms: z.number().int().describe('as_of in ms since the epoch'),
  delay_seconds: z.number().int().describe('0: computed live (the hosted service delays its list)'),
  count: count('opportunities on this page'),
};

export const ArbPage = z.object({
  ...hostedPage,
  opportunities: z.array(ArbOpportunity.extend({ title: z.string().describe('match group title'), updated_at: updatedAt })).describe('by ROI, best first'),
  _meta: z.object({ ...signalMeta, fees: z.string().describe('how fees are counted') }),
});

/** The 200 body of /ev. */
export const EvPage = z.object({
  ...hostedPage,
  opportunities: z.array(EvOpportunity.extend({ title: z.string().describe('match group title'), updated_at: updatedAt })).describe('by ROI, best first'),
  _meta: z.object({ ...signalMeta, consensus: z.string().describe('how the consensus is computed') }),
});
