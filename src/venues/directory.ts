import type { Config, VenueConfig } from '../config/schema.js';

/**
 * Slug ⇄ label lookups for the API layer. Requests and responses speak slugs (a renamed slug
 * renames every path, parameter and value); state speaks labels.
 */
export class VenueDirectory {
  readonly bySlug = new Map<string, VenueConfig>();
  readonly byLabel = new Map<string, VenueConfig>();
  readonly enabled: readonly VenueConfig[];

  constructor(config: Config) {
    this.enabled = config.venues.filter((v) => v.enabled);
    for (const v of config.venues) {
      this.bySlug.set(v.slug, v);
      this.byLabel.set(v.label, v);
    }
  }

  /** Slugs of enabled venues, optionally only those with a capability. */
  slugs(filter?: (v: VenueConfig) => boolean): string[] {
    return this.enabled.filter((v) => !filter || filter(v)).map((v) => v.slug);
  }

  /** The venue with `capability` (the venue_a catalog, the venue_b wallet data), if one is enabled. */
  withCapability(cap: keyof VenueConfig['capabilities']): VenueConfig | undefined {
    return this.enabled.find((v) => v.capabilities[cap]);
  }

  slugOf(label: string): string {
    return this.byLabel.get(label)?.slug ?? label;
  }
}

/** The venue's own market id behind an API id (prefix stripped for prefixed venues). */
export function nativeId(v: VenueConfig, marketId: string): string {
  const p = `${v.slug}_`;
  return v.idPrefix && marketId.startsWith(p) ? marketId.slice(p.length) : marketId;
}

/**
 * A market's page URL from the registry template. Placeholders: {marketId} (the venue's own id),
 * and any key of the market's `extra` record ({series}, {event}, {slug}, {eventSlug}, …); a
 * template whose placeholders cannot all be filled gives undefined rather than a broken link.
 */
export function marketUrl(
  v: VenueConfig,
  nativeId: string,
  extra: Readonly<Record<string, unknown>> | undefined,
  template = v.web.marketUrl,
): string | undefined {
  let missing = false;
  const url = template.replace(/\{(\w+)\}/g, (_, k: string) => {
    const val = k === 'marketId' || k === 'outcomeId' ? (extra?.[k] ?? nativeId) : extra?.[k];
    if (val === undefined || val === null || val === '') {
      missing = true;
      return '';
    }
    return encodeURIComponent(String(val));
  });
  return missing ? undefined : url;
}
