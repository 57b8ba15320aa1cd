/**
 * Signed handshake headers for venues whose WebSocket needs an API key (Kalshi: RSA-PSS; Polymarket
 * US: Ed25519). Both sign `timestamp + "GET" + path`. The ws client copies the headers once per
 * connection attempt, so the timestamp header is a getter that signs afresh (a reused signature is
 * refused once stale) and the signature header, read after it, returns that signature.
 */
export function signedHeaders(
  names: { readonly key: string; readonly timestamp: string; readonly signature: string },
  keyId: string,
  path: string,
  signMessage: (message: Buffer) => Buffer,
): Record<string, string> {
  let current = { ts: '', sig: '' };
  const headers: Record<string, string> = {};
  // Insertion order matters: the timestamp getter signs, the signature getter (read after it) reuses.
  Object.defineProperty(headers, names.key, { value: keyId, enumerable: true });
  Object.defineProperty(headers, names.timestamp, {
    enumerable: true,
    get: () => {
      // The venue checks this against its own wall clock: never the engine's (a replay never connects).
      // eslint-disable-next-line no-restricted-properties
      const ts = String(Date.now());
      current = { ts, sig: signMessage(Buffer.from(`${ts}GET${path}`)).toString('base64') };
      return ts;
    },
  });
  Object.defineProperty(headers, names.signature, { enumerable: true, get: () => current.sig });
  return headers;
}
