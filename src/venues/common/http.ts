import type { z } from 'zod';

/** A venue REST call that failed: network, HTTP status, bad JSON or a body that failed its schema. */
export class VenueHttpError extends Error {
  constructor(
    readonly url: string,
    readonly kind: 'network' | 'status' | 'json' | 'schema',
    detail: string,
    readonly status?: number,
    /** The venue's Retry-After, ms (a 429 or 503 that said how long to wait). */
    readonly retryAfterMs?: number,
  ) {
    super(`${url}: ${kind}: ${detail}`);
    this.name = 'VenueHttpError';
  }

  /** A later attempt may succeed: the network (timeouts included), 429 Too Many Requests, 5xx. */
  get retryable(): boolean {
    return this.kind === 'network' || (this.kind === 'status' && (this.status === 429 || (this.status ?? 0) >= 500));
  }
}

/** How often one request is tried before its failure fails the walk it belongs to. */
export interface RetryPolicy {
  readonly attempts: number;
  /** Wait before the second attempt; doubled per attempt, never over `maxDelayMs`. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * Each page of a catalog walk is retried in place: a walk of a 100k-market venue takes hundreds of
 * requests, and one timeout or 429 would otherwise start the whole walk again (on a loaded machine
 * or a rate-limited venue it then never finishes).
 */
export const PAGE_RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 500, maxDelayMs: 5_000 };

/** Seconds of a Retry-After header as ms (the HTTP-date form is not used by the venues). */
function retryAfter(res: Response): number | undefined {
  const v = res.headers.get('retry-after');
  return v !== null && /^\d{1,6}$/.test(v.trim()) ? Number(v.trim()) * 1000 : undefined;
}

async function getJsonOnce<T>(url: string, schema: z.ZodType<T>, timeoutMs: number): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
  } catch (e) {
    throw new VenueHttpError(url, 'network', (e as Error).message);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    // The head arrived but the body did not (the timeout fired mid-body, the connection dropped):
    // a network failure to try again, not a malformed document from the venue.
    if (res.ok) throw new VenueHttpError(url, 'network', `body cut short: ${(e as Error).message}`);
    text = '';
  }
  if (!res.ok) throw new VenueHttpError(url, 'status', `${res.status} ${text.slice(0, 200)}`, res.status, retryAfter(res));
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

/**
 * GET a JSON document and validate it with a zod schema (venue REST is low-rate, so it gets
 * full validation: STYLE.md rule 5). A failure a later attempt may not repeat (see
 * `VenueHttpError.retryable`) is tried again per `retry`, after the venue's Retry-After when it
 * gave one; the last failure is thrown, saying how many attempts it took. Throws VenueHttpError.
 */
export async function getJson<T>(url: string, schema: z.ZodType<T>, timeoutMs = 10_000, retry: RetryPolicy = PAGE_RETRY): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await getJsonOnce(url, schema, timeoutMs);
    } catch (e) {
      if (!(e instanceof VenueHttpError) || !e.retryable || attempt >= retry.attempts) {
        if (attempt > 1 && e instanceof Error) e.message += ` (after ${attempt} attempts)`;
        throw e;
      }
      const backoff = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1));
      const ms = Math.min(retry.maxDelayMs, e.retryAfterMs ?? backoff);
      // Unreferenced: a walk waiting to retry does not keep a closing process alive.
      await new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
    }
  }
}

/** Joins a base URL and a path with exactly one slash, appending query parameters. */
export function url(base: string, path: string, query?: Record<string, string | number | boolean | undefined>): string {
  const u = new URL(base.replace(/\/+$/, '') + '/' + path.replace(/^\/+/, ''));
  if (query) for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, String(v));
  return u.toString();
}
