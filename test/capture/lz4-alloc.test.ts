import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const normblock = pathToFileURL(join(import.meta.dirname, '../../src/capture/normblock.ts')).href;

/**
 * The normalized cache's writer leaves lz4-napi's allocator alone (src/capture/lz4.ts): memory
 * mimalloc takes on libuv's pool stayed resident after it was freed (30–40 MiB at 108k markets,
 * issue 34). A fresh process packs blocks as the cache does, then reads back (the reader keeps the
 * addon), and mimalloc's own statistics at exit say whether its arena was opened before the read.
 */
async function allocatorStats(read: boolean): Promise<string> {
  const script = [
    `const m = await import(${JSON.stringify(normblock)});`,
    'const body = Buffer.from(`{"type":"book_delta","price":42}\\n`.repeat(32768));',
    'let z; for (let i = 0; i < 8; i++) z = await m.packNormBlock(body);',
    read ? 'await m.unpackNormBlock(z, body.length);' : '',
  ].join('\n');
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MIMALLOC_')));
  const { stderr } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env: { ...env, MIMALLOC_SHOW_STATS: '1' } });
  return stderr;
}

describe("the normalized cache's writer and lz4-napi's allocator", () => {
  it('packs blocks without mimalloc opening its arena', async () => {
    expect(await allocatorStats(false)).toMatch(/^\s*arenas:\s+0\s*$/m);
  });

  it('(the statistics say so when it does: a read decompresses through the addon)', async () => {
    expect(await allocatorStats(true)).toMatch(/^\s*arenas:\s+1\s*$/m);
  });
});
