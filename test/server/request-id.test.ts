import { describe, expect, it } from 'vitest';
import { requestId } from '../../src/server/request-id.js';

describe('requestId', () => {
  it('makes random (version 4) UUIDs in canonical lower-case form, none repeated across batches', () => {
    const ids = Array.from({ length: 2_000 }, () => requestId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('sets only the version and variant bits: every other hex digit takes all 16 values', () => {
    const seen = Array.from({ length: 36 }, () => new Set<string>());
    for (let i = 0; i < 2_000; i++) [...requestId()].forEach((c, at) => seen[at]!.add(c));
    const sizes = seen.map((s) => s.size);
    // Dashes at 8, 13, 18, 23; the version digit at 14; the variant digit (8, 9, a, b) at 19.
    expect(sizes).toEqual(Array.from({ length: 36 }, (_, at) => ([8, 13, 18, 23, 14].includes(at) ? 1 : at === 19 ? 4 : 16)));
  });
});
