// A preload for memory curves of the service: `node --import ./bench/scale/memwatch.mjs bin/crossbook.js serve`
// appends one JSON line every MEMWATCH_SEC seconds (default 20) to MEMWATCH_FILE: seconds since start,
// RSS (anon / file-backed) from /proc/self/status, process.memoryUsage() (heap used / total, external,
// array buffers), V8's heap spaces (used / committed), and every 3rd line the mappings from
// /proc/self/smaps summed by kind (V8's 256 KiB heap pages, other anonymous maps, `[heap]` (malloc's
// main arena), DATA_DIR/crossbook.mdb, other files), plus the capture's lag and drops from /status.
// Only the process whose argv says `serve` writes (the simulator child inherits the preload).
import { appendFileSync, readFileSync } from 'node:fs';
import v8 from 'node:v8';

const file = process.env.MEMWATCH_FILE;
if (file && process.argv.includes('serve')) {
  const every = Number(process.env.MEMWATCH_SEC ?? 20) * 1000;
  const t0 = performance.now();
  const mib = (b) => Math.round(b / 2 ** 20);
  const kb = (s, k) => Math.round(Number(new RegExp(k + ':\\s+(\\d+)').exec(s)?.[1] ?? 0) / 1024);
  const smaps = () => {
    const out = { v8pages: 0, anonOther: 0, brk: 0, lmdb: 0, files: 0 };
    let kind = 'anonOther';
    for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
      const m = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
      if (m) {
        const size = parseInt(m[2], 16) - parseInt(m[1], 16);
        const path = m[3];
        kind = path === '[heap]' ? 'brk' : path.endsWith('.mdb') ? 'lmdb' : path.startsWith('/') ? 'files' : size === 256 * 1024 ? 'v8pages' : 'anonOther';
      } else if (line.startsWith('Rss:')) out[kind] += Number(/(\d+)/.exec(line)[1]);
    }
    for (const k of Object.keys(out)) out[k] = Math.round(out[k] / 1024);
    return out;
  };
  let n = 0;
  const tick = async () => {
    const st = readFileSync('/proc/self/status', 'utf8');
    const mu = process.memoryUsage();
    const spaces = Object.fromEntries(
      v8.getHeapSpaceStatistics().map((s) => [s.space_name.replace('_space', ''), [mib(s.space_used_size), mib(s.physical_space_size)]]),
    );
    const row = {
      t: Math.round((performance.now() - t0) / 1000),
      rss: kb(st, 'VmRSS'),
      anon: kb(st, 'RssAnon'),
      file: kb(st, 'RssFile'),
      heapUsed: mib(mu.heapUsed),
      heapTotal: mib(mu.heapTotal),
      external: mib(mu.external),
      arrayBuffers: mib(mu.arrayBuffers),
      spaces,
    };
    if (n++ % 3 === 0) row.smaps = smaps();
    if (process.env.PORT) {
      try {
        const s = await (await fetch(`http://127.0.0.1:${process.env.PORT}/api/v2/status`, { signal: AbortSignal.timeout(5000) })).json();
        row.live = Object.values(s.platforms ?? {}).filter((p) => p.feed_status === 'ok').length;
        row.markets = Object.values(s.platforms ?? {}).reduce((a, p) => a + p.active_markets, 0);
        if (s.capture) row.capture = { lag: s.capture.lag, drops: s.capture.drops, mib: mib(s.capture.bytes) };
      } catch {
        // not listening yet, or /status not answering within 5 s (a starved machine): the line is written without it
      }
    }
    appendFileSync(file, JSON.stringify(row) + '\n');
  };
  setInterval(() => void tick(), every).unref();
}
