import type { z } from 'zod';

/** A venue REST call that failed: network, HTTP status, bad JSON or a body that failed its schema. */
export class VenueHttpError extends Error {
  constructor(
    readonly url: string,
    readonly kind: 'network' | 'status' | 'json' | 'schema',
    detail: string,
    readonly status?: number,
  ) {
    super(`${url}: ${kind}: ${detail}`);
    this.name = 'VenueHttpError';
  }
}

/**
 * GET a JSON document and validate it with a zod schema (venue REST is low-rate, so it gets
 * full validation: STYLE.md rule 5). Throws VenueHttpError.
 */
export async function getJson<T>(url: string, schema: z.ZodType<T>, timeoutMs = 10_000): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
  } catch (e) {
    throw new VenueHttpError(url, 'network', (e as Error).message);
  }
  const text = await res.text().catch(() => '');
  if (!res.ok) throw new VenueHttpError(url, 'status', `${res.status} ${text.slice(0, 200)}`, res.status);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw new VenueHttpError(url, 'json', (e as Error).message);
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new VenueHttpError(url, 'schema', `${first?.path.join('.') ?? ''}: ${first?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** Joins a base URL and a path with exactly one slash, appending query parameters. */
export function url(base: string, path: string, query?: Record<string, string | number | boolean | undefined>): string {
  const u = new URL(base.replace(/\/+$/, '') + '/' + path.replace(/^\/+/, ''));
  if (query) for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, String(v));
  return u.toString();
}
