import { z } from 'zod';
import { typedReply, type Api } from '../access/api.js';
import { documentAs, p } from '../access/params.js';
import type { QuotaGroup } from '../access/plans.js';
import { errorReply } from '../server/http.js';
import { FADE_TYPES, SMART_MONEY_TYPES, type AlertEngine, type AlertType } from '../signals/alerts.js';
import type { WalletLedger } from '../signals/wallets.js';
import { alertJson } from '../views/alert.js';
import { decodeCursor, encodeCursor, type ApiContext } from './context.js';
import { AlertJson, count, cursor, time } from '../views/schemas.js';

/** The 200 body of /alerts/smart-money and /alerts/fade-finder. */
export const AlertPage = z.object({
  alerts: z.array(AlertJson),
  pagination: z.object({ limit: count('page size'), count: count('alerts on this page'), cursor, has_more: z.boolean() }),
  next_cursor: cursor,
  _meta: z.object({
    alert_types: z.array(z.string()),
    platforms: z.array(z.string()),
    since: time('the since filter').optional(),
    wallet_platforms: z.array(z.string()).describe('venues whose trades carry wallets'),
    anonymous_platforms: z.array(z.string()).optional().describe('venues whose trades are anonymous'),
    scored_entries: count('entries scored so far'),
    horizon_seconds: z.number().int(),
  }),
});

/**
 * GET /alerts/smart-money and GET /alerts/fade-finder (spec 4.14, 4.15, 2.14): newest first,
 * cursor-paginated on the alert sequence (a page never shifts while alerts arrive), `since` in
 * unix seconds or ISO 8601 (the spec leaves the format open, so both are accepted). `platform`
 * takes the venues with smart-money or fade-finder coverage; the others (venue_g, venue_h) are
 * answered with a 400 that says they have no alert data rather than an empty list that would
 * read as "nothing happened".
 */
export function registerAlerts(api: Api, ctx: ApiContext, ledger: WalletLedger, alerts: AlertEngine): void {
  const covered = ctx.venues.enabled.filter((v) => v.capabilities.smartMoney || v.capabilities.fadeFinder);
  const uncovered = ctx.venues.enabled.filter((v) => !v.capabilities.smartMoney && !v.capabilities.fadeFinder).map((v) => v.slug);
  const walletVenues = ctx.venues.enabled.filter((v) => v.capabilities.walletData).map((v) => v.slug);
  const anonymous = ctx.venues.enabled.filter((v) => v.capabilities.smartMoney && !v.capabilities.walletData).map((v) => v.slug);
  const allSlugs = ctx.venues.slugs();

  const feed = (o: { path: string; group: QuotaGroup; types: readonly AlertType[]; summary: string; description: string }): void => {
    api.route({
      path: o.path,
      summary: o.summary,
      description: o.description,
      tags: ['alerts'],
      group: o.group,
      endpoint: o.group,
      query: z.object({
        alert_type: p.enum(['all', ...o.types] as const, { default: 'all' }),
        limit: p.int({ min: 1, max: 100, default: 20 }),
        cursor: p.string({ max: 2000, description: 'opaque token from a previous page' }),
        since: p.unixSeconds({ orIso: true, description: 'only alerts raised at or after this time: unix seconds or ISO 8601' }),
        // Every slug parses (so the uncovered ones get a message saying why); the document lists the covered ones.
        platform: documentAs(
          p.enum(allSlugs, {
            description: `one of ${covered.map((v) => v.slug).join(', ')}${uncovered.length ? `; ${uncovered.join(', ')} have no alert data (400)` : ''}`,
          }),
          () => ({ type: 'string', enum: covered.map((v) => v.slug) }),
        ),
      }),
      responseDescription: 'Alerts newest first; next_cursor = pagination.cursor (pass it as cursor; null on the last page)',
      response: AlertPage,
      handler: (c) => {
        const q = c.query;
        if (q.platform !== undefined && uncovered.includes(q.platform))
          return errorReply(
            400,
            'validation.no_data',
            `invalid parameter "platform": ${q.platform} has no alert data (it is not covered by the smart-money or fade-finder feeds); accepted: ${covered.map((v) => v.slug).join(', ')}`,
          );
        let before: number | undefined;
        if (q.cursor !== undefined) {
          const k = decodeCursor(q.cursor);
          if (!k || typeof k['s'] !== 'number' || !Number.isSafeInteger(k['s']) || k['s'] < 1)
            return errorReply(400, 'validation.invalid_cursor', 'invalid parameter "cursor": not a cursor this API issued');
          before = k['s'];
        }
        const types = new Set<AlertType>(q.alert_type === 'all' ? o.types : [q.alert_type as AlertType]);
        const venues = q.platform !== undefined ? new Set([ctx.venues.bySlug.get(q.platform)!.label]) : undefined;
        const page = alerts.page({ types, venues, since: q.since, before, limit: q.limit! });
        const out = page.alerts.map((a) => alertJson(ctx.venues.slugOf(a.venue), a, ctx.state.catalog.get(a.venue, a.marketId)?.title ?? null));
        const last = page.alerts[page.alerts.length - 1];
        const cursor = page.more && last ? encodeCursor({ s: last.seq }) : null;
        return typedReply(AlertPage, {
          alerts: out,
          pagination: { limit: q.limit!, count: out.length, cursor, has_more: page.more },
          next_cursor: cursor,
          _meta: {
            alert_types: [...types],
            platforms: q.platform !== undefined ? [q.platform] : covered.map((v) => v.slug),
            ...(q.since !== undefined ? { since: new Date(q.since).toISOString() } : {}),
            wallet_platforms: walletVenues,
            ...(anonymous.length ? { anonymous_platforms: anonymous } : {}),
            scored_entries: ledger.scoredTotal,
            horizon_seconds: Math.round(ledger.horizonMs / 1000),
          },
        });
      },
    });
  };

  const lo = ledger.options;
  const ao = alerts.options;
  const rule = `an entry is good when the market moved ≥ ${lo.goodMoveUnits / 100}¢ its way within ${Math.round(lo.horizonMs / 1000)} s, bad when it moved as much against it`;
  feed({
    path: '/alerts/smart-money',
    group: 'smart_money',
    types: SMART_MONEY_TYPES,
    summary: 'Smart-money alerts (smart_money, insider, captain_hook), newest first',
    description: [
      `smart_money: a taker buy of at least $${ao.smartMinUsd} by a wallet whose scored entries show it gets in early (≥ ${lo.smartMinEntries} scored entries, lower 95% bound of its hit rate ≥ ${lo.smartMinHitRate * 100}%; ${rule}). Raised at trade time.`,
      `insider: a position of at least $${ao.insiderMinUsd} taken ahead of a move of ≥ ${ao.insiderMinMoveUnits / 100}¢, raised when the move confirms (one horizon after the entry); figures.path says why: track_record (a wallet with ≥ ${ao.insiderPriorMinEntries} earlier entries, ≥ ${ao.insiderPriorMinHitRate * 100}% good, betting at least ${ao.insiderMinSizeRatio}× its usual size), fresh_wallet (a wallet with ≤ ${ao.insiderFreshMaxEntries} scored entries and a position of ≥ $${ao.insiderFreshMinUsd} holding ≥ ${ao.insiderFreshMinShare * 100}% of its exposure) or anonymous_trade (a single trade of ≥ $${ao.anonymousMinUsd} on a venue whose trades carry no wallets; wallet is null).`,
      `captain_hook: a wallet that built a position of ≥ $${ao.hookMinCostUsd} sells ≥ ${ao.hookMinFraction * 100}% of it ≥ ${ao.hookMinGainUnits / 100}¢ above its average cost into a spike ≥ ${ao.hookMinSpikeUnits / 100}¢ above the ${Math.round(ao.hookWindowMs / 60_000)}-minute low. Raised at trade time.`,
      `Wallet-based alerts come from ${walletVenues.join(', ') || 'no venue'}; ${anonymous.join(', ') || 'no venue'} trades are anonymous and yield only size-based insider alerts. Repeats per (type, wallet, market, outcome) are folded for ${Math.round(ao.cooldownMs / 60_000)} minutes. Every alert carries reason and figures.`,
    ].join(' '),
  });
  feed({
    path: '/alerts/fade-finder',
    group: 'fade_finder',
    types: FADE_TYPES,
    summary: 'Fade alerts: large bets by wallets that are reliably wrong, newest first',
    description: `fade: a taker buy of at least $${ao.fadeMinUsd} by a wallet with ≥ ${lo.fadeMinEntries} scored entries whose miss rate has a lower 95% bound of at least ${lo.fadeMinMissRate * 100}% (${rule}). Raised at trade time; the figures say how often the wallet was wrong.`,
  });
}
