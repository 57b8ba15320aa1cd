/**
 * Keeping API keys out of logs (spec 5.3: keys in query strings leak into logs). A parameter is
 * redacted when its name, percent-decoded and lower-cased, is `api_key`, however the client
 * spelled it (`api%5Fkey`, `%61pi_key`, `API_KEY`); and anything shaped like a key (`pmx_…`,
 * raw or percent-encoded) is redacted wherever it appears in a logged path or query.
 */

const KEY_SHAPE = /pmx_[A-Za-z0-9_-]{8,}/g;
const HAS_KEY = /pmx_[A-Za-z0-9_-]{8,}/;
const REDACTED = '[redacted]';

/** Decodes percent-escapes one by one, leaving malformed ones as they are (never throws). */
function lenientDecode(s: string): string {
  if (!s.includes('%') && !s.includes('+')) return s;
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s.replace(/\+/g, ' ').replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  }
}

/** `s` with every key-shaped token, percent-encoded or not, replaced. */
function scrub(s: string): string {
  if (!/pmx|%70|%6d|%78|%5f/i.test(s)) return s;
  const decoded = lenientDecode(s);
  if (decoded !== s && HAS_KEY.test(decoded)) return REDACTED;
  return s.replace(KEY_SHAPE, REDACTED);
}

/** A raw query string with `api_key` values and key-shaped tokens redacted, for logs. */
export function redactQuery(q: string): string {
  if (q === '') return q;
  return q
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      const name = eq < 0 ? part : part.slice(0, eq);
      if (lenientDecode(name).toLowerCase() === 'api_key') return eq < 0 ? part : `${name}=${REDACTED}`;
      return scrub(part);
    })
    .join('&');
}

/** A request path with key-shaped segments redacted, for logs and error messages. */
export function redactPath(path: string): string {
  return path
    .split('/')
    .map((seg) => scrub(seg))
    .join('/');
}
