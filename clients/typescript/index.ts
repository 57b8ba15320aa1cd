import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, paths } from './schema.js';
export { CrossbookStream, type StreamOptions, type StreamSnapshot, type StreamUpdate, type WebSocketLike } from './stream.js';

/** Every schema of the document by name: records (Market, MatchGroup, …) and WebSocket messages (WsPriceUpdate, …). */
export type Schemas = components['schemas'];

/** Where crossbook is and the key to call it with. */
export interface ClientOptions {
  /** Base URL of the service, without /api/v2 (e.g. http://127.0.0.1:8080). */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** A fetch to use instead of the global one. */
  readonly fetch?: typeof globalThis.fetch;
}

/**
 * A typed REST client of the crossbook API: paths, parameters and response bodies are the types
 * generated from /api/v2/openapi.json (openapi-fetch over openapi-typescript). The key goes in the
 * X-API-Key header.
 *
 *     const cb = createCrossbookClient({ baseUrl: 'http://127.0.0.1:8080', apiKey });
 *     const { data, error } = await cb.GET('/markets', { params: { query: { platform: 'venue_a', limit: 10 } } });
 */
export function createCrossbookClient(o: ClientOptions) {
  return createClient<paths>({
    baseUrl: `${o.baseUrl.replace(/\/+$/, '')}/api/v2`,
    headers: { 'X-API-Key': o.apiKey },
    ...(o.fetch ? { fetch: o.fetch } : {}),
  });
}

/** The typed REST client. */
export type CrossbookClient = ReturnType<typeof createCrossbookClient>;
