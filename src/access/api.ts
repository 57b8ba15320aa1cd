import { MAX_HEAD_BYTES, MAX_HEADER_FIELDS } from '../server/guard.js';
import { z } from 'zod';
import type { HttpServer, Reply, RequestCtx } from '../server/http.js';
import { errorReply, jsonReply } from '../server/http.js';
import type { KeyRecord, KeyStore } from './keys.js';
import { decodePathSegment, docOf, ParamError, parseQuery, validate } from './params.js';
import type { Plan, PlanName, QuotaGroup } from './plans.js';
import type { QuotaLedger, RateLimitLines } from './quota.js';

/** What a route handler sees: the request plus its validated query, path params and caller. */
export interface ApiCtx<Q> extends RequestCtx {
  readonly query: Q;
  readonly path_: Readonly<Record<string, string>>;
  readonly key: KeyRecord | undefined;
  readonly plan: Plan | undefined;
}

/** Statuses a handler answers itself besides 200 (the request pipeline's 400/401/403/405/429/500 are always documented). */
export type HandlerStatus = 404 | 409 | 422 | 503;

/** One extra status of a route: what it means, and its body when that is not the Error schema. */
export type StatusDoc = string | { readonly description: string; readonly schema: z.ZodType };

export interface RouteSpec<Q> {
  /** Path under the API base, `:name` for path parameters. */
  readonly path: string;
  /** HTTP method (default get; a post route takes no request body). */
  readonly method?: 'get' | 'post';
  readonly summary: string;
  readonly description?: string;
  readonly tags?: readonly string[];
  /** Needs an API key (default true; only /status and /openapi.json say false). */
  readonly auth?: boolean;
  /** Monthly quota group the route counts against. */
  readonly group?: QuotaGroup;
  /** Name plans can block (plans.json `blocked`), e.g. "arb". */
  readonly endpoint?: string;
  /** zod object of query parameters built with `p.*` helpers (refinements allowed). */
  readonly query?: z.ZodType<Q>;
  /** Path parameters: name → description, or description and the pattern the handler enforces. */
  readonly pathParams?: Readonly<Record<string, string | PathParamDoc>>;
  readonly responseDescription?: string;
  /** zod schema of the 200 body: the OpenAPI document's response schema (strict: every field named). */
  readonly response?: z.ZodType;
  /** Content type of the 200 body (default application/json; a string schema then). */
  readonly contentType?: string;
  /** Statuses the handler answers itself, with what each means. */
  readonly errors?: Readonly<Partial<Record<HandlerStatus, StatusDoc>>>;
  readonly handler: (ctx: ApiCtx<Q>) => Reply | Promise<Reply>;
}

/** A path parameter's description and the pattern its handler checks (a mismatch is a 400). */
export interface PathParamDoc {
  readonly description: string;
  readonly pattern?: RegExp;
}

/** A query string parsed and validated: the api_key it carried, and the query or the 400. */
interface Parsed<Q> {
  readonly apiKey: string | undefined;
  readonly query?: Q;
  readonly error?: ParamError;
}

/** Parsed queries of one route: every distinct query string seen (bounded), and the most recent few. */
interface QueryCache<Q> {
  readonly map: Map<string, Parsed<Q>>;
  readonly recent: { readonly raw: string; readonly parsed: Parsed<Q> }[];
}

/** Query strings of a route compared by content before the map is consulted. */
const RECENT_QUERIES = 4;

/**
 * A market_id given as `platform:market_id` (the form /prices/bulk and the WebSocket take) with
 * the same platform as the request's `platform` is read as the native id, on every route that
 * takes both: no native id starts with its own venue's slug and a colon.
 */
function stripPlatformPrefix<Q>(q: Q): Q {
  const r = q as { platform?: unknown; market_id?: unknown };
  if (typeof r.platform === 'string' && typeof r.market_id === 'string' && r.market_id.startsWith(`${r.platform}:`))
    r.market_id = r.market_id.slice(r.platform.length + 1);
  return q;
}

/** The decoded path parameters of a route without any (one object for all of its requests). */
const NO_PATH_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

/** Path parameters percent-decoded (a ParamError names the one that is not valid). */
function decodePathParams(params: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in params) out[k] = decodePathSegment(k, params[k]!);
  return out;
}

const AUTH_MESSAGES = {
  missing: 'API key required: send it in the X-API-Key header (or the api_key query parameter)',
  invalid: 'invalid API key',
  revoked: 'API key has been revoked',
} as const;

/** Who is calling: a key's active record and its plan, or why the key is refused (its 401 code and message). */
export type Caller =
  | { readonly ok: true; readonly record: KeyRecord; readonly plan: Plan }
  | { readonly ok: false; readonly reason: 'missing' | 'invalid' | 'revoked'; readonly code: string; readonly message: string };

/**
 * The access layer's key check, the one every caller goes through (REST routes here, the WebSocket
 * upgrade and its in-band login): the presented key's active record and plan, or the refusal.
 */
export function authenticate(keys: KeyStore, plans: Readonly<Record<PlanName, Plan>>, presented: string | undefined): Caller {
  const v = keys.verify(presented);
  if (!v.ok) return REFUSED[v.reason];
  // One answer per key record (a record is replaced, not changed, when its key is revoked): the
  // request path allocates nothing for it.
  const known = callers.get(v.record);
  const plan = plans[v.record.plan];
  if (known !== undefined && known.plan === plan) return known;
  const who: Caller = { ok: true, record: v.record, plan };
  callers.set(v.record, who);
  return who;
}

const REFUSED = {
  missing: { ok: false, reason: 'missing', code: 'auth.missing_key', message: AUTH_MESSAGES.missing },
  invalid: { ok: false, reason: 'invalid', code: 'auth.invalid_key', message: AUTH_MESSAGES.invalid },
  revoked: { ok: false, reason: 'revoked', code: 'auth.revoked_key', message: AUTH_MESSAGES.revoked },
} as const satisfies Record<string, Caller>;
const callers = new WeakMap<KeyRecord, Extract<Caller, { ok: true }>>();

/**
 * The one request pipeline every endpoint plugs into (issue: access layer). Declaring a route
 * gives it, in order: API key check (401), plan gate (403 auth.endpoint_blocked), the per-second
 * bucket (429 + Retry-After), query and path validation (400 naming the parameter), the monthly
 * and group quotas (429), every rate-limit header (on every keyed response, refusals included:
 * a refused request is not counted, its headers say where the caller stands), and an entry in the
 * OpenAPI document.
 */
export class Api {
  private readonly specs: RouteSpec<unknown>[] = [];

  constructor(
    private readonly http: HttpServer,
    readonly base: string,
    private readonly keys: KeyStore,
    private readonly quota: QuotaLedger,
    private readonly plans: Readonly<Record<PlanName, Plan>>,
  ) {}

  /** Routes declared so far. */
  get size(): number {
    return this.specs.length;
  }

  route<Q>(spec: RouteSpec<Q>): void {
    this.specs.push(spec as RouteSpec<unknown>);
    const auth = spec.auth ?? true;
    const cache: QueryCache<Q> = { map: new Map(), recent: [] };
    const hasParams = spec.path.includes(':');
    const method = spec.method ?? 'get';
    this.http[method](`${this.base}${spec.path}`, (ctx) => this.run(spec, auth, hasParams, ctx, cache));
  }

  /**
   * Parses and validates a raw query string once: validation is a pure function of the string, and
   * clients poll with the same query over and over, so the result (or the 400) is kept per route
   * for up to 2,000 distinct query strings. The few most recent are compared first: each request's
   * query is a fresh string, and comparing it with an equal one is cheaper than hashing it for the
   * map (a /prices/bulk query of 100 ids is several kilobytes).
   */
  private parse<Q>(spec: RouteSpec<Q>, rawQuery: string, cache: QueryCache<Q>): Parsed<Q> {
    const recent = cache.recent;
    for (let i = 0; i < recent.length; i++) {
      const r = recent[i]!;
      if (r.raw.length === rawQuery.length && r.raw === rawQuery) return r.parsed;
    }
    const hit = cache.map.get(rawQuery) ?? this.parseOnce(spec, rawQuery, cache.map);
    if (recent.length >= RECENT_QUERIES) recent.pop();
    recent.unshift({ raw: rawQuery, parsed: hit });
    return hit;
  }

  private parseOnce<Q>(spec: RouteSpec<Q>, rawQuery: string, cache: Map<string, Parsed<Q>>): Parsed<Q> {
    let out: Parsed<Q>;
    try {
      const raw = parseQuery(rawQuery);
      const apiKey = raw['api_key'];
      delete raw['api_key'];
      try {
        out = { apiKey, query: spec.query ? stripPlatformPrefix(validate(spec.query, raw)) : (undefined as Q) };
      } catch (e) {
        if (!(e instanceof ParamError)) throw e;
        out = { apiKey, error: e };
      }
    } catch (e) {
      if (!(e instanceof ParamError)) throw e;
      // Still authenticate and rate-limit a malformed request before answering it.
      out = { apiKey: lenientKey(rawQuery), error: e };
    }
    if (cache.size >= 2_000) cache.clear();
    cache.set(rawQuery, out);
    return out;
  }

  private run<Q>(spec: RouteSpec<Q>, auth: boolean, hasParams: boolean, ctx: RequestCtx, cache: QueryCache<Q>): Reply | Promise<Reply> {
    let keyRecord: KeyRecord | undefined;
    let plan: Plan | undefined;
    // The rate-limit header lines go on the context itself (RequestCtx carries them for the head).
    const h = ctx;
    const parsed = this.parse(spec, ctx.rawQuery, cache);
    const queryKey = parsed.apiKey;
    if (auth) {
      const who = authenticate(this.keys, this.plans, ctx.headers['x-api-key'] ?? queryKey);
      if (!who.ok) return errorReply(401, who.code, who.message);
      keyRecord = who.record;
      plan = who.plan;
      if (spec.endpoint && plan.blocked.includes(spec.endpoint)) {
        this.quota.peek(keyRecord.id, plan, spec.group, h);
        return errorReply(
          403,
          'auth.endpoint_blocked',
          `the ${plan.name} plan does not include ${this.base}${spec.path}; upgrade to a plan that includes ${spec.endpoint}`,
        );
      }
      const r = this.quota.rate(keyRecord.id, plan, h);
      if (!r.ok) {
        this.quota.peek(keyRecord.id, plan, spec.group, h);
        return errorReply(429, 'rate_limit.second', r.message, {}, r.retryAfterSec);
      }
    }
    if (parsed.error) return this.refuse(keyRecord, plan, spec.group, h, 400, parsed.error);
    const query = parsed.query as Q;
    let pathParams: Readonly<Record<string, string>> = NO_PATH_PARAMS;
    if (hasParams)
      try {
        pathParams = decodePathParams(ctx.params);
      } catch (e) {
        if (e instanceof ParamError) return this.refuse(keyRecord, plan, spec.group, h, 400, e);
        throw e;
      }
    if (keyRecord && plan) {
      const r = this.quota.consume(keyRecord.id, plan, spec.group, h);
      if (!r.ok) return errorReply(429, spec.group ? `rate_limit.${spec.group}` : 'rate_limit.month', r.message, {}, r.retryAfterSec);
    }
    // Extend the request context in place (no copy per request).
    const actx = ctx as RequestCtx & { query: Q; path_: Readonly<Record<string, string>>; key: KeyRecord | undefined; plan: Plan | undefined };
    actx.query = query;
    actx.path_ = pathParams;
    actx.key = keyRecord;
    actx.plan = plan;
    return spec.handler(actx);
  }

  /** A 400 before the request is counted: with the month headers of a keyed caller all the same. */
  private refuse(key: KeyRecord | undefined, plan: Plan | undefined, group: QuotaGroup | undefined, h: RateLimitLines, status: number, e: ParamError): Reply {
    if (key && plan) this.quota.peek(key.id, plan, group, h);
    return errorReply(status, e.code, e.message);
  }

  /** Path items of routes served outside this router (the WebSocket), for the OpenAPI document. */
  private readonly documented: Record<string, Record<string, unknown>> = {};

  /** Adds the OpenAPI path item of a route another component serves (path relative to the base). */
  document(path: string, item: Record<string, unknown>): void {
    this.documented[path] = item;
  }

  /** Schemas of the document's components (WebSocket messages, shared records), by name. */
  private readonly components: Record<string, z.ZodType> = {};

  /** Adds named schemas to the document's components (the WebSocket messages, which no path item can carry). */
  component(schemas: Readonly<Record<string, z.ZodType>>): void {
    Object.assign(this.components, schemas);
  }

  /** The OpenAPI 3.1 document of every declared route (spec 9: version 2.x). */
  openapi(serverUrl: string, version = '2.1.0'): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const s of this.specs) paths[s.path.replace(/:([A-Za-z_]+)/g, '{$1}')] = { [s.method ?? 'get']: this.operation(s) };
    // A component's own path item wins over the router's (GET /ws: the upgrade, not the plain GET's 426).
    Object.assign(paths, this.documented);
    const schemas: Record<string, unknown> = { Error: jsonSchema(ErrorBody) };
    for (const [name, schema] of Object.entries(this.components)) schemas[name] = jsonSchema(schema);
    return {
      openapi: '3.1.0',
      info: {
        title: 'crossbook Market Aggregation API',
        version,
        description:
          'Read-only prediction-market data: prices, books, matching, signals. All prices are cents on a 0 to 100 scale; ROI is percent, net of each venue taker fee. Every route answers 405 to other methods than its own (GET, or POST for /ws-token) and 500 (with request_id) on an internal error.',
      },
      servers: [{ url: serverUrl }],
      paths,
      components: {
        securitySchemes: {
          ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          ApiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key', description: 'For quick tests only: the key ends up in logs and Referer headers.' },
        },
        schemas,
        responses: {
          BadRequest: errorResponse('Invalid or missing parameters (code validation.*)'),
          Unauthorized: errorResponse('No, invalid or revoked key (code auth.missing_key, auth.invalid_key, auth.revoked_key)'),
          Forbidden: errorResponse('Plan does not allow the endpoint (code auth.endpoint_blocked)'),
          TooManyRequests: {
            ...errorResponse('Per-second or monthly limit exceeded (code rate_limit.*)'),
            headers: { 'Retry-After': { schema: { type: 'integer' } } },
          },
          MethodNotAllowed: errorResponse('Method not allowed: every route is GET (and HEAD) except POST /ws-token (code method_not_allowed)'),
          HeadTooLarge: errorResponse(
            `Request head over ${MAX_HEAD_BYTES} bytes or more than ${MAX_HEADER_FIELDS} header fields (code headers_too_large; the connection is closed)`,
          ),
          InternalError: errorResponse('Internal error (code internal_error; request_id names the log line)'),
        },
      },
    };
  }

  /** The OpenAPI operation of one route: parameters with every constraint, and every status it answers. */
  private operation(s: RouteSpec<unknown>): Record<string, unknown> {
    const auth = s.auth ?? true;
    const contentType = s.contentType ?? 'application/json';
    const body = s.response ? jsonSchema(s.response) : contentType === 'application/json' ? { type: 'object' } : { type: 'string' };
    const responses: Record<string, unknown> = {
      200: { description: s.responseDescription ?? 'OK', content: { [contentType]: { schema: body } } },
      // Malformed query strings (bad percent-encoding, a parameter given twice) are a 400 on every route.
      400: { $ref: '#/components/responses/BadRequest' },
    };
    if (auth) {
      responses[401] = { $ref: '#/components/responses/Unauthorized' };
      if (s.endpoint) responses[403] = { $ref: '#/components/responses/Forbidden' };
      responses[429] = { $ref: '#/components/responses/TooManyRequests' };
    }
    for (const [status, doc] of Object.entries(s.errors ?? {}) as [string, StatusDoc][])
      responses[status] =
        typeof doc === 'string' ? errorResponse(doc) : { description: doc.description, content: { 'application/json': { schema: jsonSchema(doc.schema) } } };
    responses[405] = { $ref: '#/components/responses/MethodNotAllowed' };
    responses[431] = { $ref: '#/components/responses/HeadTooLarge' };
    responses[500] = { $ref: '#/components/responses/InternalError' };
    return {
      summary: s.summary,
      ...(s.description ? { description: s.description } : {}),
      tags: s.tags ?? [],
      operationId: s.path.replace(/[/:{}-]+/g, '_').replace(/^_|_$/g, '') || 'root',
      parameters: parametersOf(s),
      security: auth ? [{ ApiKeyHeader: [] }, { ApiKeyQuery: [] }] : [],
      ...(s.group ? { 'x-quota-group': s.group } : {}),
      responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b))),
    };
  }

  /**
   * Serves the OpenAPI document (no key). Rebuilt at most once a second: some parameter schemas
   * follow the catalog (the categories a venue lists), the rest never change.
   */
  serveOpenapi(serverUrl: string): void {
    let body: string | undefined;
    let builtAt = 0;
    this.http.get(`${this.base}/openapi.json`, () => {
      const now = Date.now();
      if (body === undefined || now - builtAt >= 1_000) {
        body = JSON.stringify(this.openapi(serverUrl));
        builtAt = now;
      }
      return { status: 200, body };
    });
  }
}

/** The fields of the error body (spec 7); routes with extra error fields spread them into their own schema. */
export const ErrorFields = {
  error: z.string().describe('human-readable message naming the parameter or the reason'),
  success: z.literal(false),
  code: z.string().describe('machine-readable code: validation.*, auth.*, rate_limit.*, not_found, …'),
  request_id: z.string().optional().describe('the request id (500 only; also in the X-Request-ID header)'),
};

/** The error body of every non-200 answer (spec 7). */
export const ErrorBody = z.object(ErrorFields).describe('Error');

/** A zod schema as the JSON Schema (2020-12, the dialect of OpenAPI 3.1) of the response it describes. */
export function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>;
  delete out['$schema'];
  return out;
}

function errorResponse(description: string): Record<string, unknown> {
  return { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
}

/** The path and query parameters of a route with the constraints its validator enforces. */
function parametersOf(s: RouteSpec<unknown>): unknown[] {
  const params: unknown[] = [];
  for (const [name, d] of Object.entries(s.pathParams ?? {})) {
    const doc = typeof d === 'string' ? { description: d } : d;
    const schema = { type: 'string', ...(doc.pattern ? { pattern: doc.pattern.source } : {}) };
    params.push({ name, in: 'path', required: true, description: doc.description, schema });
  }
  const shape = s.query && 'shape' in s.query ? (s.query as unknown as z.ZodObject).shape : {};
  for (const [name, schema] of Object.entries(shape)) {
    const d = docOf(schema as z.ZodType);
    params.push({
      name,
      in: 'query',
      required: d?.required ?? false,
      ...(d?.description ? { description: d.description } : {}),
      schema: (typeof d?.schema === 'function' ? d.schema() : d?.schema) ?? { type: 'string' },
    });
  }
  return params;
}

export { jsonReply };

/** `T` with every array and object readonly (domain records are readonly; a schema's output type is not). */
export type DeepReadonly<T> = T extends readonly (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** A 200 JSON reply whose body is typed by the route's response schema (the one the document shows). */
export function typedReply<S extends z.ZodType>(_schema: S, body: DeepReadonly<z.output<S>>): Reply {
  return jsonReply(body);
}

/** The api_key parameter of a query string that failed strict parsing elsewhere. */
function lenientKey(rawQuery: string): string | undefined {
  const m = /(?:^|&)api_key=([^&]*)/.exec(rawQuery);
  if (!m) return undefined;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return m[1];
  }
}
