import type { MarketUrlLookup, UrlCandidate } from '../protocol.js';

/** The slugs the Polymarket mappers keep in a market's `extra`. */
export interface PolymarketSlugs {
  /** The market's own slug (Gamma `slug`). */
  readonly slug: string | undefined;
  /** The slug of the event the market belongs to (Gamma event `slug`). */
  readonly eventSlug: string | undefined;
}

/** Reads the slugs of a market's `extra`; anything that is not a string is absent. */
export function polymarketSlugs(extra: UrlCandidate['extra']): PolymarketSlugs {
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  return { slug: str(extra?.['slug']), eventSlug: str(extra?.['eventSlug']) };
}

/**
 * Polymarket market pages: polymarket.com/event/<event slug>[/<market slug>] or
 * /market/<market slug>. A market slug selects its market; failing that (or without one), the
 * first slug selects every market of that event, or the market of that slug.
 */
export function parsePolymarketUrl(segments: readonly string[]): readonly MarketUrlLookup[] {
  const slugs = segments.slice(1);
  const market = slugs[1] ?? (segments[0] === 'market' ? slugs[0] : undefined);
  const first = slugs[0];
  const out: MarketUrlLookup[] = [];
  if (market) out.push({ where: (m) => polymarketSlugs(m.extra).slug === market });
  if (first)
    out.push({
      where: (m) => {
        const s = polymarketSlugs(m.extra);
        return s.eventSlug === first || s.slug === first;
      },
    });
  return out;
}
