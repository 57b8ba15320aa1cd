// What lz4-napi's allocator (mimalloc, its own arena beside glibc's) keeps resident after the normalized
// cache's compressions: packs N 1 MiB block bodies of NDJSON-like lines one after another, as NormLines.seal
// does, either with the addon's `compress` (on libuv's pool; the output freed here when collected: the
// writer before `mem16`) or with `packNormBlock` (src/capture/lz4.ts, JavaScript on this thread), collects,
// and prints RSS, the Rss of mimalloc's arena (the 1 GiB anonymous mapping in /proc/self/smaps) and the time
// spent packing. Run on a built checkout with the glibc settings of `npm start`:
//   MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 node --expose-gc bench/scale/lz4-retained.mjs [N] [addon|js]
// (MIMALLOC_PURGE_DELAY=0 beside `addon`: the allocator option tried and dropped, see BENCHMARKS.md `mem16`.)
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { packNormBlock } from '../../dist/src/capture/normblock.js';

const N = Number(process.argv[2] ?? 300);
const mode = process.argv[3] ?? 'js';
const pack = mode === 'addon' ? createRequire(import.meta.url)('lz4-napi').compress : packNormBlock;
const mib = (kb) => Math.round(kb / 1024);
const rss = () => mib(Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]));
function arenaRss() {
  let size = 0;
  let total = 0;
  for (const l of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(l);
    if (m) size = m[3] === '' ? parseInt(m[2], 16) - parseInt(m[1], 16) : 0;
    else if (l.startsWith('Rss:') && size >= 2 ** 30) total += Number(/(\d+)/.exec(l)[1]);
  }
  return mib(total);
}
function body(i) {
  const parts = [];
  for (let n = 0; n < 1 << 20;) {
    const l = `{"type":"book_delta","venue":"kalshi","marketId":"KX-${(i * 7919 + n) % 100000}","seq":${n},"price":${(n * 13) % 100},"size":${n % 977}}\n`;
    parts.push(l);
    n += l.length;
  }
  return Buffer.from(parts.join(''));
}
const t0 = performance.now();
let out = 0;
let packMs = 0;
for (let i = 0; i < N; i++) {
  const b = body(i);
  const t = performance.now();
  out += (await pack(b)).length;
  packMs += performance.now() - t;
}
const ms = Math.round(performance.now() - t0);
const cpu = process.cpuUsage();
globalThis.gc?.();
await new Promise((r) => setTimeout(r, 200));
globalThis.gc?.();
await new Promise((r) => setTimeout(r, 200));
console.log(
  JSON.stringify({
    mode,
    purgeDelay: process.env.MIMALLOC_PURGE_DELAY,
    blocks: N,
    meanOut: Math.round(out / N),
    ms,
    packMs: Math.round(packMs),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    rssMiB: rss(),
    mimallocArenaMiB: arenaRss(),
  }),
);
