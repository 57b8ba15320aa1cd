import { z } from 'zod';
import type { Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import type { VenueConfig } from '../../config/schema.js';
import { errorReply, jsonReply } from '../../server/http.js';
import type { MarketRecord } from '../../state/catalog.js';
import { PROTOCOL_MODULES } from '../../venues/index.js';
import { apiMarketId, type MarketUrlLookup } from '../../venues/protocol.js';
import type { ApiContext } from '../context.js';
import { GroupList, groupListBody, groupsOfRecords, type MatchingRoutes } from './shared.js';

/** /matching-markets/url: groups of a market page URL (web hosts and deep links of the URL-matcher venues). */
export function registerMatchingUrl(api: Api, r: MatchingRoutes): void {
  api.route({
    path: '/matching-markets/url',
    summary: 'Match groups of a market page URL (hosts of the venues with the URL matcher, deep links included)',
    tags: ['matching'],
    group: 'matched_markets',
    description:
      'url is a market page of a venue with the URL matcher (its web host or deep link); another host, a page that names no known market or malformed percent-encoding is a 400 (validation.invalid_url).',
    query: z.object({
      url: p.string({
        required: true,
        max: 2000,
        format: 'uri',
        description: `market page URL on ${r.ctx.venues.enabled
          .filter((v) => v.capabilities.urlMatcher)
          .flatMap((v) => v.web.hosts)
          .join(', ')}`,
      }),
    }),
    response: GroupList,
    handler: (c) => {
      const res = resolveUrl(r.ctx, c.query.url!);
      if ('error' in res) return errorReply(400, 'validation.invalid_url', `invalid parameter "url": ${res.error}`);
      const groups = groupsOfRecords(r.matching, res.markets);
      return jsonReply(groupListBody(r.views, groups, { platform: res.venue.slug, resolved: res.markets.map((m) => m.marketId) }));
    },
  });
}

/** A market page URL → the venue and markets it names (spec 4.3), by the URL grammar of the venue's protocol. */
function resolveUrl(ctx: ApiContext, raw: string): { venue: VenueConfig; markets: MarketRecord[] } | { error: string } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { error: 'not a URL' };
  }
  const host = u.host.toLowerCase();
  const deep = u.protocol !== 'https:' && u.protocol !== 'http:';
  const venue = ctx.venues.enabled.find(
    (v) => v.web.hosts.includes(host) || (deep && v.web.deepLink !== undefined && v.web.deepLink.startsWith(`${u.protocol}//`)),
  );
  if (!venue) {
    const known = ctx.venues.enabled.filter((v) => v.capabilities.urlMatcher).flatMap((v) => v.web.hosts);
    return { error: `host "${host}" is not a supported market page; accepted hosts: ${known.join(', ')}` };
  }
  if (!venue.capabilities.urlMatcher) return { error: `${venue.slug} market pages cannot be resolved by the URL matcher` };
  let segments: string[];
  try {
    segments = (deep ? `${u.host}${u.pathname}` : u.pathname)
      .split('/')
      .filter(Boolean)
      .map((s) => decodeURIComponent(s));
  } catch {
    // A path with malformed percent-encoding is the client's error (400), not ours (500).
    return { error: 'malformed percent-encoding in the URL path' };
  }
  const grammar = PROTOCOL_MODULES[venue.protocol].parseMarketUrl;
  const found = find(ctx, venue, grammar ? grammar(segments) : lastSegmentIsId(venue, segments));
  if (found.length === 0) return { error: `no ${venue.slug} market found for ${u.pathname || u.host}` };
  return { venue, markets: found };
}

/** Without a protocol grammar (web /outcome/<id>, deep link <scheme>://outcome/<id>): the last segment is the venue's id. */
function lastSegmentIsId(venue: VenueConfig, segments: readonly string[]): MarketUrlLookup[] {
  const id = segments[segments.length - 1] ?? '';
  return [{ marketId: apiMarketId(venue, id) }, { marketId: id }];
}

/** The markets of the first lookup that finds any. */
function find(ctx: ApiContext, venue: VenueConfig, lookups: readonly MarketUrlLookup[]): MarketRecord[] {
  const catalog = ctx.state.catalog.venue(venue.label);
  for (const l of lookups) {
    if ('marketId' in l) {
      const m = catalog.get(l.marketId);
      if (m) return [m];
    } else {
      const hits = [...catalog.values()].filter(l.where);
      if (hits.length) return hits;
    }
  }
  return [];
}
