import { describe, expect, it } from 'vitest';
import { RequestIds, requestId } from '../../src/server/request-id.js';

/** A version 8 UUID (RFC 9562) in canonical lower-case form, variant 10. */
const V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('requestId', () => {
  it('makes version 8 UUIDs in canonical lower-case form, none repeated across batches', () => {
    const ids = Array.from({ length: 2_000 }, () => requestId());
    for (const id of ids) expect(id).toMatch(V8);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('is a per-process random prefix and a counter: consecutive ids share the prefix and count up by one', () => {
    const ids = new RequestIds();
    const made = Array.from({ length: 600 }, () => ids.id());
    const prefixes = new Set(made.map((id) => id.slice(0, 24)));
    expect(prefixes.size).toBe(1);
    expect(made.map((id) => parseInt(id.slice(24), 16))).toEqual(Array.from({ length: 600 }, (_, i) => i));
  });

  it('draws the prefix from the random source (every prefix digit takes all 16 values across sources but the version and variant bits)', () => {
    const seen = Array.from({ length: 24 }, () => new Set<string>());
    for (let i = 0; i < 400; i++) [...new RequestIds().id().slice(0, 24)].forEach((c, at) => seen[at]!.add(c));
    // Dashes at 8, 13, 18, 23; the version digit at 14; the variant digit (8, 9, a, b) at 19.
    expect(seen.map((s) => s.size)).toEqual(Array.from({ length: 24 }, (_, at) => ([8, 13, 18, 23, 14].includes(at) ? 1 : at === 19 ? 4 : 16)));
  });

  it('draws a new prefix when the 48-bit counter would wrap, so no id repeats', () => {
    let draws = 0;
    const ids = new RequestIds(
      (into) => {
        draws++;
        into.fill(draws);
      },
      2 ** 48 - 100,
    );
    const first = ids.id();
    expect(draws).toBe(2);
    expect(first).toBe('02020202-0202-8202-8202-000000000000');
    expect(new RequestIds(undefined, 2 ** 48 - 256).id().slice(24)).toBe('ffffffffff00');
  });
});
