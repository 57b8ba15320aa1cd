import type { Reply, RequestCtx } from './http.js';

/** Methods a cross-origin caller may use: the API's GETs (HEAD alike) and POST (WebSocket tokens). */
const METHODS = 'GET, HEAD, POST';
/** Request headers a cross-origin caller may send. */
const REQUEST_HEADERS = 'X-API-Key, X-Request-ID, Content-Type';
/** Response headers a cross-origin script may read (the rate-limit family and Retry-After). */
const EXPOSED = 'X-Request-ID, Retry-After, X-RateLimit-Limit-Second, X-RateLimit-Remaining-Second, X-RateLimit-Limit-Month, X-RateLimit-Remaining-Month';
/** How long a browser may cache a preflight answer, seconds. */
const MAX_AGE = '600';

/**
 * Cross-origin access for the configured origins (`server.corsOrigins`): a browser page served
 * elsewhere (another dashboard, a notebook) may call the API with its key. Requests from other
 * origins get no CORS headers, so the browser keeps their answers from the calling script; an
 * origin `*` allows every origin (keys are sent in a header, never as cookies, so no credentials
 * mode is involved).
 */
export class Cors {
  private readonly any: boolean;
  private readonly origins: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.any = origins.includes('*');
    this.origins = new Set(origins);
  }

  /** Whether an Origin request header is allowed. */
  allows(origin: string | undefined): origin is string {
    return origin !== undefined && (this.any || this.origins.has(origin));
  }

  /** Adds the CORS response headers of an allowed origin to a request's answer. */
  decorate(ctx: RequestCtx): void {
    const origin = ctx.headers.origin;
    if (!this.allows(origin)) return;
    ctx.responseHeaders['access-control-allow-origin'] = origin;
    ctx.responseHeaders['access-control-expose-headers'] = EXPOSED;
    ctx.responseHeaders['vary'] = 'Origin';
  }

  /** The answer to a preflight (OPTIONS) from an allowed origin; undefined for any other OPTIONS. */
  preflight(ctx: RequestCtx): Reply | undefined {
    if (!this.allows(ctx.headers.origin)) return undefined;
    this.decorate(ctx);
    return {
      status: 204,
      body: '',
      contentType: 'text/plain',
      headers: { 'access-control-allow-methods': METHODS, 'access-control-allow-headers': REQUEST_HEADERS, 'access-control-max-age': MAX_AGE },
    };
  }
}
