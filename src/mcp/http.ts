/** Where the MCP server finds crossbook: base URL (without /api/v2) and API key. */
export interface CrossbookTarget {
  readonly url: string;
  readonly key: string | undefined;
}

/** An answer of crossbook other than 200: its status and the API's error message and code. */
export class CrossbookError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

/** A query value: absent values are left out, lists are joined with commas. */
export type QueryValue = string | number | boolean | readonly string[] | undefined;

/** The path and query string of a GET under /api/v2. */
export function pathWithQuery(path: string, query: Readonly<Record<string, QueryValue>> = {}): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    const s = Array.isArray(v) ? v.join(',') : String(v);
    parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(s)}`);
  }
  return parts.length ? `${path}?${parts.join('&')}` : path;
}

/** GETs a crossbook route (path under /api/v2) with the key in X-API-Key; the JSON body, or a CrossbookError. */
export async function getJson(target: CrossbookTarget, path: string, query?: Readonly<Record<string, QueryValue>>): Promise<unknown> {
  const url = `${target.url.replace(/\/+$/, '')}/api/v2${pathWithQuery(path, query)}`;
  const r = await fetch(url, { headers: target.key ? { 'x-api-key': target.key } : {} });
  const text = await r.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: reported as text below */
  }
  if (r.status !== 200) {
    const e = typeof body === 'object' && body !== null ? (body as { error?: unknown; code?: unknown }) : {};
    const message = typeof e.error === 'string' ? e.error : text.slice(0, 300);
    throw new CrossbookError(r.status, typeof e.code === 'string' ? e.code : undefined, `crossbook answered ${r.status}: ${message}`);
  }
  return body;
}
