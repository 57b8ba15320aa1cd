/**
 * The API key in the browser. It comes from the URL fragment (`/#key=pmx_…`: a fragment is never
 * sent to a server, and it is removed from the address bar once read) or from the form; it is kept
 * in memory only, unless the user ticks "remember on this device", which alone writes localStorage.
 */

const STORE = 'crossbook.apiKey';

/** The key in `#key=…`, if any, removed from the address bar (so it stays out of history and screenshots). */
export function keyFromFragment(): string | undefined {
  const m = /(?:^#|&)key=([^&]+)/.exec(location.hash);
  if (!m?.[1]) return undefined;
  const rest = location.hash
    .slice(1)
    .split('&')
    .filter((p) => !p.startsWith('key='))
    .join('&');
  history.replaceState(history.state, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`);
  return decodeURIComponent(m[1]);
}

/** The key remembered on this device, if the user asked for it. */
export function rememberedKey(): string | undefined {
  try {
    return localStorage.getItem(STORE) ?? undefined;
  } catch {
    return undefined; // storage disabled
  }
}

/** Remembers the key on this device, or forgets it. */
export function remember(key: string | undefined): void {
  try {
    if (key === undefined) localStorage.removeItem(STORE);
    else localStorage.setItem(STORE, key);
  } catch {
    /* storage disabled: the key stays in memory only */
  }
}

/** A key's shape (spec 5.2): the prefix pmx_ and a token. */
export function looksLikeKey(k: string): boolean {
  return /^pmx_[A-Za-z0-9_-]{8,200}$/.test(k);
}

/** Why a key was refused, from the REST answer to a keyed request (undefined: accepted). */
export async function checkKey(base: string, key: string): Promise<string | undefined> {
  if (!looksLikeKey(key)) return 'That is not an API key: keys start with pmx_ followed by a token.';
  let r: Response;
  try {
    r = await fetch(`${base}/api/v2/markets?limit=1`, { headers: { 'X-API-Key': key } });
  } catch (e) {
    return `Cannot reach crossbook at ${base}: ${e instanceof Error ? e.message : String(e)}`;
  }
  if (r.ok) return undefined;
  const body = (await r.json().catch(() => ({}))) as { error?: string };
  if (r.status === 401) return `This key was refused (401): ${body.error ?? 'invalid or revoked'}. Check it, or create one with \`crossbook keys create\`.`;
  if (r.status === 429) return `Too many requests for this key (429): ${body.error ?? 'rate limited'}; try again shortly.`;
  return `crossbook answered ${r.status}: ${body.error ?? r.statusText}`;
}
