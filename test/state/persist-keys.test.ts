import { describe, expect, it } from 'vitest';
import { afterMarket, candleKey, candleRange, KeyError, marketCode, readCandleKey, readCode, readMarketKey, upgradeKey } from '../../src/persist/keys.js';

/** Ids of the shapes the venues use (the simulator's phrasing modules make the same shapes). */
const IDS = [
  '71321045679252212594626385532706912750332728571942532289631379312455583992563', // a Polymarket token id: 77 digits
  '0x9915bea232fa12b20058f9cea1187ea51366352bf833393676cd0db557a58249', // a Polymarket condition id
  'KXNFLGAME-25NOV30SEAMIN-SEA', // a Kalshi ticker
  '3f2a9c1d0e7b4a5f6c8d', // hex without 0x
  '12345',
  '0',
  '007', // digits with a leading zero: not a number, kept as it is
  '0123', // even-length digits with a leading zero: hex bytes, read back as written
  '0xABCDEF', // upper-case hex: text
  'M',
  'Ünïcødé market — “quoted”',
  'x'.repeat(300), // longer than a length byte
];

describe('format-3 keys', () => {
  it('give back every venue and id they encode, and a candle its time', () => {
    for (const venue of ['venue_a', 'venue_h', 'venue_z', 'my-venue'])
      for (const id of IDS) {
        expect(readMarketKey(marketCode(venue, id))).toEqual({ venue, id });
        expect(readCandleKey(candleKey(venue, id, 1_764_480_000_000))).toEqual({ venue, marketId: id, t: 1_764_480_000_000 });
      }
    // 77 digits take 32 bytes, and the venue one: a 36-byte key where format 2 had 85 bytes of text
    expect(marketCode('venue_b', IDS[0]!).length).toBe(1 + 2 + 32);
    expect(marketCode('venue_b', IDS[1]!).length).toBe(1 + 2 + 32);
  });

  it('keep one market’s candles apart from every other market’s, in time order', () => {
    const ids = ['ABC', 'ABCD', 'AB', '1', '10', '100', 'ab', 'abcd', '0xab', '0xabcd'];
    const keys: { id: string; t: number; k: Buffer }[] = [];
    for (const id of ids) for (const t of [0, 60_000, 1_764_480_000_000, 2 ** 48 - 1]) keys.push({ id, t, k: candleKey('venue_a', id, t) });
    keys.sort((a, b) => Buffer.compare(a.k, b.k));
    for (const id of ids) {
      const { start, end } = candleRange('venue_a', id, 0, Infinity);
      const inRange = keys.filter((x) => Buffer.compare(x.k, start) >= 0 && Buffer.compare(x.k, end) < 0);
      expect(inRange.map((x) => [x.id, x.t])).toEqual([0, 60_000, 1_764_480_000_000, 2 ** 48 - 1].map((t) => [id, t]));
      // after its last candle and before any other market's
      const after = afterMarket(marketCode('venue_a', id));
      expect(keys.filter((x) => x.id !== id && Buffer.compare(x.k, start) >= 0 && Buffer.compare(x.k, after) < 0)).toEqual([]);
    }
    // [from, to) on whole ms, for any numbers
    const r = candleRange('venue_a', 'M', 59_999.5, 120_000);
    expect(readCandleKey(r.start).t).toBe(60_000);
    expect(readCandleKey(r.end).t).toBe(120_000);
    expect(readCandleKey(candleRange('venue_a', 'M', -5, NaN).start).t).toBe(0);
  });

  it('refuse what they cannot hold, and keys they did not write, with a clear error', () => {
    expect(() => candleKey('venue_a', 'M', 1.5)).toThrow(/candle time 1.5 cannot be stored/);
    expect(() => candleKey('venue_a', 'M', -1)).toThrow(KeyError);
    expect(() => marketCode('', 'M')).toThrow(/venue label "" cannot be stored/);
    expect(() => marketCode('venue_a', 'x'.repeat(70_000))).toThrow(/cannot be stored \(at most 65,535\)/);
    expect(() => readCode(Buffer.from([0x63, 4, 1, 0x4d]))).toThrow(/not a format-3 market key \(unknown venue byte 99\)/);
    expect(() => readCode(Buffer.from([5, 4, 9, 0x4d]))).toThrow(/id runs past the key/);
    expect(() => readCode(Buffer.from([5, 9, 1, 0x4d]))).toThrow(/unknown id tag 9/);
    expect(() => readMarketKey(Buffer.concat([marketCode('venue_a', 'M'), Buffer.from([0])]))).toThrow(/1 bytes after the code/);
    expect(() => readCandleKey(marketCode('venue_a', 'M'))).toThrow(/not a format-3 candle key/);
  });

  it('rewrite the keys format 2 wrote, and refuse ones it did not', () => {
    expect(upgradeKey('catalog', `venue_b:${IDS[1]}`)).toEqual(marketCode('venue_b', IDS[1]!));
    // the venue ends at the first ':'; an id may hold more
    expect(readMarketKey(upgradeKey('books', 'venue_a:KX:1:2'))).toEqual({ venue: 'venue_a', id: 'KX:1:2' });
    expect(upgradeKey('candles1h', ['venue_a', 'M', 3_600_000])).toEqual(candleKey('venue_a', 'M', 3_600_000));
    expect(() => upgradeKey('quotes', 'no-colon')).toThrow(/quotes: key "no-colon" is not a format-2 key/);
    expect(() => upgradeKey('quotes', ':M')).toThrow(KeyError);
    expect(() => upgradeKey('candles', ['venue_a', 'M', 'x'])).toThrow(/candles: key \["venue_a","M","x"\] is not a format-2 key/);
    expect(() => upgradeKey('candles1d', ['venue_a', 'M', 1.5])).toThrow(/candle time 1.5/);
    expect(() => upgradeKey('catalog', 42)).toThrow(KeyError);
  });
});
