import { describe, expect, it } from 'vitest';
import { decodeNormBlock, NormBlockBuilder } from '../../src/capture/normblock.js';

/**
 * The block builder of the normalized cache (src/capture/normblock.ts) writes each line's bytes into
 * one buffer it keeps from block to block: a block's body is the same bytes whatever the buffer's
 * history (grown past its first size mid-block, used again after a block), multi-byte and lone
 * surrogate characters as `Buffer.from` encodes them, and a body handed out is never written again
 * by the blocks after it (its compression runs later, on the pool).
 */
type Ev = readonly [seq: number, t: number, market: string | undefined, line: string];

function block(b: NormBlockBuilder, evs: readonly Ev[]): Buffer {
  for (const [seq, t, market, line] of evs) b.push(seq, t, 'trade', market, line);
  return b.finish();
}

function expectBlock(body: Buffer, evs: readonly Ev[]): void {
  const d = decodeNormBlock(body, 'test.nc', 0);
  const bytes = Buffer.from(evs.map((e) => `${e[3]}\n`).join(''), 'utf8');
  expect(Buffer.compare(d.lines, bytes)).toBe(0);
  expect([...d.seq]).toEqual(evs.map((e) => e[0]));
  expect([...d.t]).toEqual(evs.map((e) => e[1]));
  let end = 0;
  expect([...d.end]).toEqual(evs.map((e) => (end += Buffer.byteLength(`${e[3]}\n`, 'utf8'))));
  expect([...d.market].map((i) => (i < 0 ? undefined : d.markets[i]))).toEqual(evs.map((e) => e[2]));
}

const line = (i: number, text: string): string => JSON.stringify({ type: 'trade', i, text });

describe('NormBlockBuilder', () => {
  it('a block whose lines outgrow the first buffer, with multi-byte and lone surrogate characters: the bytes Buffer.from gives', () => {
    const evs: Ev[] = [];
    // 300 lines of ~1 KB: the 64 KiB buffer grows several times within the block.
    for (let i = 0; i < 300; i++) evs.push([i + 1, 1_000 + i, i % 3 === 0 ? undefined : `M-${i % 7}`, line(i, `€ 😀 \ud800 ${'x'.repeat(1_000)} é`)]);
    evs.push([301, 2_000, 'M-1', line(301, 'ä'.repeat(70_000))]);
    expectBlock(block(new NormBlockBuilder(), evs), evs);
  });

  it('a body handed out stays as it was while the builder fills the next blocks in the same buffer', () => {
    const b = new NormBlockBuilder();
    const first: Ev[] = Array.from({ length: 50 }, (_, i) => [i + 1, 10 + i, 'A', line(i, 'first '.repeat(20))] as const);
    const body = block(b, first);
    const copy = Buffer.from(body);
    const second: Ev[] = Array.from({ length: 40 }, (_, i) => [100 + i, 99 + i, 'B', line(i, 'SECOND '.repeat(30))] as const);
    const body2 = block(b, second);
    const third: Ev[] = Array.from({ length: 200 }, (_, i) => [500 + i, 500 + i, undefined, line(i, 'third ü '.repeat(100))] as const);
    const body3 = block(b, third);
    expect(Buffer.compare(body, copy)).toBe(0);
    expectBlock(body, first);
    expectBlock(body2, second);
    expectBlock(body3, third);
    expect(b.count).toBe(0);
    expect(b.size).toBe(0);
  });
});
