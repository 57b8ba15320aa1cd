import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lz4CompressSync, lz4Uncompress } from '../../src/capture/lz4.js';

/**
 * The normalized cache's LZ4 writer (src/capture/lz4.ts, JavaScript) against lz4-napi's reader
 * (lz4_flex): every input comes back byte for byte, across the format's edges (inputs too short
 * for a match, lengths past a 4-bit field and past 255 more, a repeat farther back than an offset
 * reaches, incompressible bytes), and recorded venue frames compress about as well as the addon does.
 */

/** Deterministic bytes (xorshift32), `alphabet` values wide: small alphabets repeat, 256 does not. */
function bytes(n: number, seed: number, alphabet = 256): Buffer {
  const b = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = (x >>> 0) % alphabet;
  }
  return b;
}

const far = bytes(40_000, 7);
const cases: Record<string, Buffer> = {
  empty: Buffer.alloc(0),
  'one byte': Buffer.from('a'),
  '12 bytes (no match may start)': Buffer.alloc(12, 1),
  '13 bytes (the shortest with a match)': Buffer.alloc(13, 1),
  'one byte repeated (match lengths past 15 + 255 × n)': Buffer.alloc(100_000, 7),
  'literals past 15 and 270 between matches': Buffer.concat([bytes(20, 1), Buffer.alloc(40, 2), bytes(300, 3), Buffer.alloc(40, 2), bytes(17, 4)]),
  'a repeat 110,000 bytes back (past the 65,535 offset)': Buffer.concat([far, bytes(70_000, 9), far]),
  incompressible: bytes(70_000, 11),
  'small alphabet': bytes(200_000, 13, 3),
  'a match ending at the last literals': Buffer.concat([Buffer.from('abcdefgh'), Buffer.from('abcdefgh'), Buffer.from('xyzzy')]),
};
for (let i = 0; i < 40; i++) cases[`short, alphabet 2, ${i}`] = bytes(13 + i * 7, 100 + i, 2);

/** Recorded Kalshi and Polymarket WebSocket frames, one a line, as a block's lines look. */
function frames(): Buffer {
  const dir = join(import.meta.dirname, '../fixtures');
  const lines: string[] = [];
  for (const f of [
    'kalshi/ws_ticker_capture_2026-02-12.json',
    'polymarket/ws_price_change_burst_capture_2026-09-29.json',
    'polymarket/ws_book_captures_2026-02-12.json',
  ])
    for (const m of JSON.parse(readFileSync(join(dir, f), 'utf8')) as unknown[]) lines.push(JSON.stringify(m));
  return Buffer.from(`${lines.join('\n')}\n`);
}

describe('LZ4 blocks written in JavaScript, read by lz4-napi', () => {
  for (const [name, input] of Object.entries(cases))
    it(`reads back: ${name}`, async () => {
      const z = lz4CompressSync(input);
      expect(z.readUInt32LE(0)).toBe(input.length);
      expect((await lz4Uncompress(z)).equals(input)).toBe(true);
    });

  it('compresses recorded frames within 10% of the addon', async () => {
    const input = frames();
    const napi = (createRequire(import.meta.url)('lz4-napi') as typeof import('lz4-napi')).compressSync(input);
    const z = lz4CompressSync(input);
    expect((await lz4Uncompress(z)).equals(input)).toBe(true);
    expect(z.length).toBeLessThan(input.length / 3);
    expect(z.length).toBeLessThan(napi.length * 1.1);
  });

  it('hands out a buffer of its own each call (the next call does not write over it)', () => {
    const a = lz4CompressSync(Buffer.alloc(1000, 1));
    const copy = Buffer.from(a);
    lz4CompressSync(bytes(5000, 5));
    expect(a.equals(copy)).toBe(true);
  });
});
