import { isIP } from 'node:net';

/** Hostnames of cloud metadata services (each answers with the host's credentials). */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal', 'metadata.azure.com']);

/** Literal addresses of metadata services outside the link-local ranges (Alibaba, AWS IPv6, Oracle's v4 is link-local). */
const METADATA_ADDRESSES = new Set(['100.100.100.200', 'fd00:ec2::254']);

/**
 * Whether an address is link-local or a metadata service: 169.254.0.0/16, fe80::/10, the same
 * inside an IPv4-mapped IPv6 address, and the known metadata addresses. Delivery checks every
 * address a hostname resolves to, so a name pointing there (or rebinding to it) is refused too.
 */
export function forbiddenAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^\[|\]$/g, '');
  const v4 = /^(?:::ffff:)?(\d{1,3})\.(\d{1,3})\.\d{1,3}\.\d{1,3}$/.exec(a);
  if (v4) return (v4[1] === '169' && v4[2] === '254') || METADATA_ADDRESSES.has(a.replace(/^::ffff:/, ''));
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(a);
  if (mapped) return parseInt(mapped[1]!, 16) === 0xa9fe || METADATA_ADDRESSES.has(mappedV4(mapped[1]!, mapped[2]!));
  if (isIP(a) === 6) {
    const first = parseInt(a.split(':')[0] || '0', 16);
    return (first & 0xffc0) === 0xfe80 || METADATA_ADDRESSES.has(a);
  }
  return false;
}

function mappedV4(hi: string, lo: string): string {
  const h = parseInt(hi, 16);
  const l = parseInt(lo, 16);
  return `${h >> 8}.${h & 255}.${l >> 8}.${l & 255}`;
}

/** A webhook URL accepted, or why not. */
export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * A webhook target: http or https, a host, no credentials in it, and (unless `allowLinkLocal`) not a
 * link-local or metadata address or hostname. Names are checked again after DNS at delivery.
 */
export function checkWebhookUrl(raw: string, opts: { allowLinkLocal?: boolean } = {}): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: `not a URL: "${raw}"` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: `only http and https URLs are delivered to (got ${url.protocol})` };
  if (!url.hostname) return { ok: false, reason: 'the URL has no host' };
  if (url.username || url.password) return { ok: false, reason: 'credentials in the URL are not accepted (the signature authenticates deliveries)' };
  if (opts.allowLinkLocal) return { ok: true, url };
  const host = url.hostname
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^\[|\]$/g, '');
  if (METADATA_HOSTS.has(host) || forbiddenAddress(host))
    return { ok: false, reason: `${host} is a link-local or cloud metadata address (allowed only with webhooks.allowLinkLocal)` };
  return { ok: true, url };
}
