import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { docOf, p } from '../../src/access/params.js';

/**
 * A parameter's documented schema says exactly what its validator accepts: a client (or fuzzer)
 * that generates values from the document is never refused, and one the document rules out is a 400.
 */
function accepts(schema: z.ZodType, v: string): boolean {
  return z.object({ x: schema }).safeParse({ x: v }).success;
}

function documented(schema: z.ZodType, v: string): boolean {
  const d = docOf(schema)!;
  const s = (typeof d.schema === 'function' ? d.schema() : d.schema) as Record<string, unknown>;
  const branches = (s['anyOf'] as Record<string, unknown>[] | undefined) ?? [s];
  return branches.some((b) => {
    if (b['type'] === 'boolean') return v === 'true' || v === 'false';
    if (b['type'] === 'integer') {
      if (!/^-?\d+$/.test(v)) return false;
      const n = Number(v);
      return (b['minimum'] === undefined || n >= (b['minimum'] as number)) && (b['maximum'] === undefined || n <= (b['maximum'] as number));
    }
    if (Array.isArray(b['enum'])) return (b['enum'] as string[]).includes(v);
    const len = [...v].length;
    if (typeof b['minLength'] === 'number' && len < b['minLength']) return false;
    if (typeof b['maxLength'] === 'number' && len > b['maxLength']) return false;
    return typeof b['pattern'] !== 'string' || new RegExp(b['pattern']).test(v);
  });
}

const TIMES = [
  '2026-01-01',
  '2024-02-29',
  '2026-02-29',
  '2026-02-30',
  '2026-04-31',
  '0000-01-01',
  '0099-06-01',
  '0100-06-01',
  '2026-13-01',
  '2026-1-01',
  '2026-01-01T10:00',
  '2026-01-01 10:00',
  '2026-01-01T10:00:59.123456789Z',
  '2026-01-01T10:00+0100',
  '2026-01-01T10:00-05:30',
  '2026-01-01T24:00',
  '2026-01-01T10:60',
  '2026-01-01T10:00:00.1234567890Z',
  '2026-01-01Tnoon',
  '1767225600',
  '',
  'abc',
];

const cases: [string, z.ZodType, string[]][] = [
  ['p.isoTime', p.isoTime(), TIMES],
  ['p.date', p.date(), TIMES],
  ['p.unixSeconds', p.unixSeconds(), ['0', '1767225600', '999999999999', '1000000000000', '-1', '1.5', 'abc', '']],
  // Beyond the ISO forms it documents, orIso takes whatever Date.parse reads after a calendar date
  // (a tenth fraction digit, "2026-01-01GMT"): lenient input, left out here.
  ['p.unixSeconds orIso', p.unixSeconds({ orIso: true }), [...TIMES.filter((t) => !t.includes('.1234567890')), '999999999999']],
  ['p.int', p.int({ min: 1, max: 100 }), ['1', '100', '0', '101', '5.0', '+5', 'x', '', '00007']],
  ['p.bool', p.bool({ default: false }), ['true', 'FALSE', 'Yes', 'no', '1', '0', 'maybe', '', 'tru']],
  ['p.enum', p.enum(['a', 'b'] as const), ['a', 'b', 'A', 'c', 'a,b', '']],
  ['p.list', p.list(), ['a', 'a,b', 'a, b', 'a,,b', ',', ' ', 'a,', ' a ,b ']],
  ['p.list values', p.list({ values: ['x', 'y'] as const, allowAll: true }), ['x', 'x,y', 'x, y', 'all', 'z', 'x,,y', 'x,all', '']],
  ['p.string', p.string({ min: 3, max: 5 }), ['abc', 'abcde', 'ab', 'abcdef', '', 'ééé']],
];

describe('documented parameter schemas', () => {
  for (const [name, schema, values] of cases)
    it(`${name}: the document accepts exactly what the validator accepts`, () => {
      const disagreements = values.filter((v) => accepts(schema, v) !== documented(schema, v));
      expect(disagreements).toEqual([]);
    });
});
