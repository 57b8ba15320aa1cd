import { describe, expect, it } from 'vitest';
import { BlockBuilder, decodeRecords, KIND } from '../../src/capture/record.js';

describe('capture block builder', () => {
  it('reads back every payload as appended: ASCII, multi-byte text, bytes past 0x7f, empty, and one larger than its buffer', () => {
    const b = new BlockBuilder(64);
    const big = '{"x":"' + 'é€𝄞'.repeat(200) + '"}';
    const bytes = Uint8Array.from([0, 1, 0x7f, 0x80, 0xc3, 0xff]);
    const items: [number, number, number, number, string | Uint8Array][] = [
      [KIND.frame, 3, 10, 1000, '{"type":"orderbook_delta","msg":{"price":42}}'],
      [KIND.doc, 0, 11, 999, 'Zürich – “quoted” 中文'],
      [KIND.event, 0, 12, 1003, bytes],
      [KIND.flush, 0, 13, 1003, ''],
      [KIND.frame, 70_000, 14, 1001, big],
    ];
    for (const [kind, conn, seq, t, p] of items) b.push(kind, conn, seq, t, p);
    expect(b.length).toBe(5);
    const { body, info } = b.finish();
    expect(info).toEqual({ count: 5, firstSeq: 10, lastSeq: 14, minT: 999, maxT: 1003, rawBytes: body.length });
    const back = decodeRecords(body, 'venue_a', 'f.seg', 8);
    expect(back.map((r) => [r.kind, r.conn, r.seq, r.t])).toEqual([
      ['frame', 3, 10, 1000],
      ['doc', 0, 11, 999],
      ['event', 0, 12, 1003],
      ['flush', 0, 13, 1003],
      ['frame', 70_000 & 0xffff, 14, 1001],
    ]);
    expect(back[0]!.payload).toBe(items[0]![4]);
    expect(back[1]!.payload).toBe(items[1]![4]);
    expect(Buffer.from(back[2]!.payload as Uint8Array)).toEqual(Buffer.from(bytes));
    expect(back[3]!.payload).toBe('');
    expect(back[4]!.payload).toBe(big);
  });

  it('starts the next block empty after finish, keeping nothing of the last', () => {
    const b = new BlockBuilder(16);
    b.push(KIND.frame, 1, 1, 5, 'first block, longer than the buffer it started with');
    b.finish();
    expect(b.length).toBe(0);
    expect(b.size).toBe(0);
    b.push(KIND.frame, 1, 2, 7, 'second');
    const { body, info } = b.finish();
    expect(info).toMatchObject({ count: 1, firstSeq: 2, lastSeq: 2, minT: 7, maxT: 7 });
    expect(decodeRecords(body, 'venue_a', 'f.seg', 8).map((r) => r.payload)).toEqual(['second']);
  });
});
