import { createHmac, timingSafeEqual } from 'node:crypto';

/** The X-Crossbook-Signature value of a body: `sha256=` + hex HMAC-SHA256 of the raw body with the secret. */
export function signature(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Checks a received signature in constant time (what a receiver does; used by tests and the bench receiver). */
export function verifySignature(secret: string, body: string | Buffer, header: string | undefined): boolean {
  if (!header) return false;
  const want = Buffer.from(signature(secret, body));
  const got = Buffer.from(header);
  return got.length === want.length && timingSafeEqual(got, want);
}
