import type { CrossbookClient } from 'crossbook/client';

/** A match group member as the dashboard shows it: its prices side by side with the others'. */
export interface Member {
  readonly platform: string;
  readonly market_id: string;
  readonly title: string;
  readonly inverted: boolean;
  readonly confidence: number | null;
  readonly reasons: readonly string[];
  readonly url: string | null;
  readonly yes_bid: number | null;
  readonly yes_ask: number | null;
  readonly no_bid: number | null;
  readonly no_ask: number | null;
  readonly last_price: number | null;
}

export interface GroupView {
  readonly group_id: number;
  readonly title: string;
  readonly event_name: string | null;
  readonly members: readonly Member[];
}

type Raw = Record<string, unknown>;
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** A group record of /matching-markets, /events or /search. */
export function groupFromRecord(g: Raw): GroupView {
  const markets = Array.isArray(g['markets']) ? (g['markets'] as Raw[]) : [];
  return {
    group_id: Number(g['group_id']),
    title: str(g['title']) ?? '',
    event_name: str(g['event_name']),
    members: markets.map((m) => ({
      platform: String(m['platform']),
      market_id: String(m['market_id']),
      title: str(m['title']) ?? String(m['market_id']),
      inverted: m['inverted'] === true,
      confidence: num(m['confidence']),
      reasons: Array.isArray(m['reasons']) ? (m['reasons'] as string[]) : [],
      url: str(m['url']),
      yes_bid: num(m['yes_bid']),
      yes_ask: num(m['yes_ask']),
      no_bid: num(m['no_bid']),
      no_ask: num(m['no_ask']),
      last_price: num(m['last_price']),
    })),
  };
}

/**
 * A group by id: its members from /unified-orderbook; then, when a member is on a venue the
 * matcher can be asked by key (venue_a ticker, venue_b condition id), the full record with each
 * member's confidence and reasons from /matching-markets; otherwise current prices from /prices/bulk.
 */
export async function loadGroup(client: CrossbookClient, groupId: number): Promise<GroupView | string> {
  const { data, error } = await client.GET('/unified-orderbook', { params: { query: { group_id: groupId } } });
  if (error || !data) return (error as { error?: string } | undefined)?.error ?? `group ${groupId} not found`;
  const outcomes = (data as unknown as { outcomes: Raw[] }).outcomes;
  const keyed = outcomes.find((o) => o['platform'] === 'venue_a' || o['platform'] === 'venue_b');
  if (keyed) {
    const query = keyed['platform'] === 'venue_a' ? { venue_a_key: String(keyed['market_id']) } : { venue_b_key: String(keyed['market_id']) };
    const r = await client.GET('/matching-markets', { params: { query } });
    const g = (r.data?.groups as Raw[] | undefined)?.find((x) => x['group_id'] === groupId);
    if (g) return groupFromRecord(g);
  }
  const ids = outcomes.map((o) => `${String(o['platform'])}:${String(o['market_id'])}`);
  const bulk = await client.GET('/prices/bulk', { params: { query: { ids: ids.join(',') } } });
  const prices = (bulk.data?.prices ?? {}) as Record<string, Raw>;
  return {
    group_id: groupId,
    title: String((data as unknown as Raw)['title'] ?? ''),
    event_name: null,
    members: outcomes.map((o, i) => {
      const p = prices[ids[i]!] ?? {};
      return {
        platform: String(o['platform']),
        market_id: String(o['market_id']),
        title: str(o['title']) ?? String(o['market_id']),
        inverted: o['inverted'] === true,
        confidence: null,
        reasons: [],
        url: null,
        yes_bid: num(p['yes_bid']),
        yes_ask: num(p['yes_ask']),
        no_bid: num(p['no_bid']),
        no_ask: num(p['no_ask']),
        last_price: num(p['last_price']),
      };
    }),
  };
}

/** The group of a market: the given id, else the matcher asked by the market's key (venue_a, venue_b). */
export async function groupOfMarket(client: CrossbookClient, platform: string, id: string, group: number | undefined): Promise<GroupView | string> {
  if (group !== undefined) return loadGroup(client, group);
  if (platform !== 'venue_a' && platform !== 'venue_b') return 'Open this market from the board or a match group to see its group.';
  const query = platform === 'venue_a' ? { venue_a_key: id } : { venue_b_key: id };
  const { data, error } = await client.GET('/matching-markets', { params: { query } });
  if (error) return (error as { error?: string }).error ?? 'no group';
  const g = (data.groups as Raw[]).find((x) => Array.isArray(x['markets']) && (x['markets'] as Raw[]).some((m) => m['market_id'] === id));
  return g ? groupFromRecord(g) : 'This market is in no cross-venue group.';
}
