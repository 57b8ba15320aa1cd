import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { partKey, SliceFile, writeSlice, type MarketPart } from '../../src/history/slice.js';

const dir = mkdtempSync(join(tmpdir(), 'cb-slice-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('history slice files', () => {
  it('write and read back a slice of more markets than a 16-bit msgpack map holds (108k markets: 70,000 here)', async () => {
    const markets = new Map<string, MarketPart>();
    for (let i = 0; i < 70_000; i++)
      markets.set(partKey('venue_a', `M${i}`), { books: [[`M${i}`, [[5000 + (i % 100), 10]], [], 1, 2, true]], quote: undefined, events: [] });
    const bytes = await writeSlice(dir, { start: 1_000, markets, venues: new Map() });
    expect(bytes).toBeGreaterThan(0);
    const f = SliceFile.open(dir, 1_000);
    expect(f.market(partKey('venue_a', 'M69999'))?.books[0]).toEqual(['M69999', [[5099, 10]], [], 1, 2, true]);
    expect(f.market(partKey('venue_a', 'M0'))?.books[0]?.[1]).toEqual([[5000, 10]]);
    expect(f.market(partKey('venue_a', 'nope'))).toBeUndefined();
  }, 120_000);
});

describe('history slice files, damaged', () => {
  it('refuse a slice cut short (no closing magic) or a directory past the file, naming the file', async () => {
    const markets = new Map<string, MarketPart>([[partKey('venue_a', 'M'), { books: [['M', [[5000, 1]], [], 1, 2, true]], quote: undefined, events: [] }]]);
    await writeSlice(dir, { start: 2_000, markets, venues: new Map() });
    const file = join(dir, '2000.hist');
    const whole = readFileSync(file);
    writeFileSync(file, whole.subarray(0, whole.length - 3));
    expect(() => SliceFile.open(dir, 2_000)).toThrow(/2000\.hist is a truncated crossbook history slice/);
    const bad = Buffer.from(whole);
    bad.writeUInt32LE(whole.length * 2, whole.length - 12);
    writeFileSync(file, bad);
    expect(() => SliceFile.open(dir, 2_000)).toThrow(/2000\.hist is a damaged crossbook history slice/);
    writeFileSync(file, whole);
    expect(SliceFile.open(dir, 2_000).market(partKey('venue_a', 'M'))?.books[0]?.[1]).toEqual([[5000, 1]]);
  });
});
