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

  it('stores a frame given with its received bytes as those bytes when ASCII, and as its text otherwise', () => {
    const b = new BlockBuilder(64);
    const ascii = '{"type":"orderbook_delta","msg":{"price":42}}';
    const utf8 = '{"title":"Zürich – “quoted”"}';
    // Bytes that are not valid UTF-8: the text the socket decoded holds U+FFFD, and that text is what is kept.
    const bad = Buffer.from([0x7b, 0xe2, 0x7d]);
    b.push(KIND.frame, 1, 1, 5, ascii, Buffer.from(ascii));
    b.push(KIND.frame, 1, 2, 5, utf8, Buffer.from(utf8));
    b.push(KIND.frame, 1, 3, 5, bad.toString(), bad);
    const { body } = b.finish();
    expect(decodeRecords(body, 'venue_a', 'f.seg', 8).map((r) => r.payload)).toEqual([ascii, utf8, '{\ufffd}']);
  });

  it("hands out a body nothing later changes: copied out while no recycled buffer is there, the builder's own once one is", () => {
    const b = new BlockBuilder(64);
    const texts = ['first', 'second, written while the first is being compressed', 'third', 'fourth'];
    const bodies: Buffer[] = [];
    const copies: Buffer[] = [];
    const finish = (i: number): Buffer => {
      b.push(KIND.frame, 1, i + 1, 5 + i, texts[i]!);
      const { body } = b.finish();
      bodies.push(body);
      copies.push(Buffer.from(body));
      return body;
    };
    const one = finish(0);
    const two = finish(1); // the first is still out: copied out again
    expect(two.buffer).not.toBe(one.buffer);
    b.recycle(one);
    const three = finish(2); // handed over in place (after the room left for headers); the next block fills `one`'s buffer
    expect(three.byteOffset).toBeGreaterThan(0);
    finish(3);
    expect(bodies.map((x) => decodeRecords(x, 'venue_a', 'f.seg', 8)[0]!.payload)).toEqual(texts);
    expect(bodies).toEqual(copies);
  });

  it("copies a block finished while an earlier body is still out into a buffer of its own size, not one as large as the builder's", () => {
    const b = new BlockBuilder();
    const frame = `{"type":"orderbook_delta","price":0.52,"delta":10,${'"pad":0,'.repeat(30)}"side":"yes"}`;
    let seq = 0;
    while (b.size < 1 << 20) b.push(KIND.frame, 1, ++seq, 5, frame); // a full block grows the builder's buffer past 1 MiB
    const full = b.finish();
    expect(full.body.buffer.byteLength).toBeGreaterThan(1 << 20);
    // A writer behind on its compressions: a second's few frames finished while the full block is still out, ten times.
    const small: Buffer[] = [];
    for (let i = 0; i < 10; i++) {
      for (let k = 0; k < 5; k++) b.push(KIND.frame, 1, ++seq, 6 + i, frame);
      small.push(b.finish().body);
    }
    for (const body of small) expect(body.buffer.byteLength).toBe(body.length);
    expect(small.map((x) => decodeRecords(x, 'venue_a', 'f.seg', 8).length)).toEqual(Array<number>(10).fill(5));
    // Once they are back, the full block's buffer is the spare: the next block is handed over in place, uncopied.
    for (const body of small) b.recycle(body);
    b.recycle(full.body);
    b.push(KIND.frame, 1, ++seq, 20, frame);
    const next = b.finish();
    expect(next.body.byteOffset).toBeGreaterThan(0);
    expect(next.body.buffer.byteLength).toBe(full.body.buffer.byteLength);
  });

  it('copies out a block with more headers than its buffer has room for, and leaves room for as many in the next', () => {
    const b = new BlockBuilder(64);
    const n = 200; // 24-byte headers: more than the room a 64-byte builder starts with
    for (let i = 0; i < n; i++) b.push(KIND.flush, 0, i + 1, 1000 + i, '');
    b.push(KIND.frame, 2, n + 1, 2000, 'after the markers');
    const first = b.finish();
    expect(decodeRecords(first.body, '_turn', 'f.seg', 8)).toHaveLength(n + 1);
    expect(first.info).toMatchObject({ count: n + 1, firstSeq: 1, lastSeq: n + 1, rawBytes: first.body.length });
    b.recycle(first.body);
    for (let i = 0; i < n; i++) b.push(KIND.flush, 0, n + 2 + i, 3000 + i, '');
    const second = b.finish();
    expect(second.body.byteOffset).toBeGreaterThan(0); // handed over in place, after the room now left free
    expect(decodeRecords(second.body, '_turn', 'f.seg', 8).map((r) => r.seq)).toEqual(Array.from({ length: n }, (_, i) => n + 2 + i));
  });

  it('lets go of a buffer and spare grown to 3.9 MB for one document (past 2.5 blocks), and keeps those of full 1 MiB blocks', () => {
    // An exchange venue's catalog document of ~3.9 MB, as at 108k markets: under the old 4 MiB bound its stream kept
    // the grown buffer and the spare copied from its block, 2 × 3.9 MiB for good.
    const b = new BlockBuilder();
    const frame = `{"type":"orderbook_delta","price":0.52,"delta":10,${'"pad":0,'.repeat(30)}"side":"yes"}`;
    let seq = 0;
    const held = (body: Buffer): number => body.buffer.byteLength;
    while (b.size < 1 << 20) b.push(KIND.frame, 1, ++seq, 5, frame);
    const full = b.finish();
    b.recycle(full.body);
    expect(held(full.body)).toBeLessThanOrEqual(2.5 * 2 ** 20);
    const doc = `{"markets":[${'"x",'.repeat(975_000)}"y"]}`;
    for (let i = 0; i < 3; i++) b.push(KIND.frame, 1, ++seq, 6, frame);
    b.push(KIND.doc, 0, ++seq, 6, doc);
    const big = b.finish();
    expect(held(big.body)).toBeGreaterThan(3.5 * 2 ** 20);
    expect(decodeRecords(big.body, 'venue_e', 'f.seg', 8)[3]!.payload).toBe(doc);
    b.recycle(big.body);
    // The blocks after it: none is built in (or copied into) a buffer as large as the document's.
    const after: Buffer[] = [];
    for (let i = 0; i < 4; i++) {
      while (b.size < 1 << 20) b.push(KIND.frame, 1, ++seq, 7 + i, frame);
      const { body } = b.finish();
      after.push(body);
      b.recycle(body);
    }
    for (const body of after) expect(held(body)).toBeLessThanOrEqual(2.5 * 2 ** 20);
    // Full 1 MiB blocks still reuse their buffers (the case above checks the hand-over in place).
    expect(held(after[3]!)).toBe(held(after[2]!));
    expect(decodeRecords(after[3]!, 'venue_e', 'f.seg', 8).at(-1)!.seq).toBe(seq);
  });

  it('lets go of a buffer grown past 4 MiB for one large document once its block is finished, and the blocks after it read back', () => {
    const b = new BlockBuilder(64);
    const doc = `{"events":[${'"x",'.repeat(2_000_000)}"y"]}`; // an 8 MB catalog page
    b.push(KIND.doc, 0, 1, 5, doc);
    const first = b.finish();
    expect(decodeRecords(first.body, 'venue_b', 'f.seg', 8)[0]!.payload).toBe(doc);
    b.recycle(first.body);
    const bodies: Buffer[] = [];
    for (let i = 0; i < 3; i++) {
      b.push(KIND.frame, 1, 2 + i, 6 + i, `frame ${i}`);
      const { body } = b.finish();
      bodies.push(body);
      b.recycle(body);
    }
    // Neither the grown buffer nor the large body came back as the next blocks' buffer.
    for (const body of bodies) expect(body.buffer.byteLength).toBeLessThan(4 * 1024 * 1024);
    expect(bodies.map((x) => decodeRecords(x, 'venue_b', 'f.seg', 8)[0]!.payload)).toEqual(['frame 0', 'frame 1', 'frame 2']);
  });
});
