import { generateKeyPairSync, verify } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { polymarketUsAuthHeaders } from '../../../src/venues/polymarket_us/feed.js';

/** The raw 32-byte seed and public key of a fresh Ed25519 pair (what the venue's key screen gives). */
function pair(): { seed: Buffer; publicKey: ReturnType<typeof generateKeyPairSync>['publicKey']; pub: Buffer } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const der = privateKey.export({ format: 'der', type: 'pkcs8' });
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  return { seed: der.subarray(der.length - 32), publicKey, pub: spki.subarray(spki.length - 32) };
}

describe('polymarketUsAuthHeaders', () => {
  const url = 'wss://api.example/v1/ws/markets';

  it('is undefined without a key id and secret', () => {
    expect(polymarketUsAuthHeaders(url, {})).toBeUndefined();
    expect(polymarketUsAuthHeaders(url, { POLYMARKET_US_KEY_ID: 'k' })).toBeUndefined();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('signs timestamp + GET + path with Ed25519, from a 32-byte seed or a 64-byte seed+public key, afresh on every read', () => {
    // The timestamp is read from Date: a fake clock moved by 3 ms between the reads, not a 3 ms sleep.
    vi.useFakeTimers({ toFake: ['Date'] });
    const { seed, publicKey, pub } = pair();
    for (const secret of [seed.toString('base64'), Buffer.concat([seed, pub]).toString('base64')]) {
      const h = polymarketUsAuthHeaders(url, { POLYMARKET_US_KEY_ID: 'b1b2-uuid', POLYMARKET_US_SECRET_KEY: secret })!;
      const first = { ...h }; // the ws client copies headers with a spread
      expect(first['X-PM-Access-Key']).toBe('b1b2-uuid');
      expect(first['X-PM-Timestamp']).toMatch(/^\d{13}$/);
      const msg = Buffer.from(`${first['X-PM-Timestamp']}GET/v1/ws/markets`);
      expect(verify(null, msg, publicKey, Buffer.from(first['X-PM-Signature']!, 'base64'))).toBe(true);
      expect(verify(null, Buffer.from(`${first['X-PM-Timestamp']}GET/v1/ws/other`), publicKey, Buffer.from(first['X-PM-Signature']!, 'base64'))).toBe(false);
      vi.advanceTimersByTime(3);
      const second = { ...h };
      expect(second['X-PM-Timestamp']).not.toBe(first['X-PM-Timestamp']);
      expect(verify(null, Buffer.from(`${second['X-PM-Timestamp']}GET/v1/ws/markets`), publicKey, Buffer.from(second['X-PM-Signature']!, 'base64'))).toBe(true);
    }
  });

  it('refuses a secret that is not a base64 Ed25519 key, naming the variable', () => {
    for (const bad of ['not base64!', Buffer.alloc(16).toString('base64'), Buffer.alloc(48).toString('base64')])
      expect(() => polymarketUsAuthHeaders(url, { POLYMARKET_US_KEY_ID: 'k', POLYMARKET_US_SECRET_KEY: bad })).toThrow(
        /POLYMARKET_US_SECRET_KEY: expected a base64 Ed25519 key/,
      );
  });
});
