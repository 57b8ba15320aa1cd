// The heap one catalog walk holds (issue 34): VENUE's feed (polymarket or polymarket_us, from ROOT's
// dist/) against a running simulator (`CROSSBOOK__sim__scale=166 crossbook sim --rate 0 --config-out
// SIM.json`), one walk; every market upsert is written to OUT (timestamps dropped, so two builds'
// files can be compared with cmp) and dropped; the live heap and array buffers after a forced full
// GC every 250 ms, above the process's start. The CPU figure includes those forced collections.
//   node --expose-gc bench/scale/catalog-walk-heap.mjs ROOT SIM.json VENUE OUT.jsonl
import { readFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const [root, simCfg, label, outFile] = process.argv.slice(2);
const dist = `${pathToFileURL(resolve(root)).href}/dist`;
const { loadConfig } = await import(`${dist}/src/config/load.js`);
const { log } = await import(`${dist}/src/core/log.js`);
const cfg = loadConfig({ env: {} });
const venue = cfg.venues.find((v) => v.label === label);
const c = JSON.parse(readFileSync(simCfg, 'utf8')).venues[label].connection;
const endpoints = { rest: c.rest, ws: c.ws, extra: c.extra };
const mod = venue.protocol === 'polymarket' ? await import(`${dist}/src/venues/polymarket/feed.js`) : await import(`${dist}/src/venues/polymarket_us/feed.js`);
const create = mod.createPolymarketFeed ?? mod.createPolymarketUsFeed;

// no data-api (no trade poll): only the catalog walk and the book channel
const ep = venue.protocol === 'polymarket' ? { ...endpoints, extra: { gamma: endpoints.extra.gamma } } : endpoints;
const feed = create({ venue, endpoints: ep, ingest: { ...cfg.ingest, catalogRefreshMs: 3_600_000 }, log: log.child({ level: 'warn' }) });
const fd = openSync(outFile, 'w');
let n = 0,
  peak = 0,
  base = 0;
const sample = () => {
  globalThis.gc();
  const u = process.memoryUsage();
  return u.heapUsed + u.arrayBuffers;
};
base = sample();
const timer = setInterval(() => {
  peak = Math.max(peak, sample());
}, 250);
const t0 = performance.now();
const cpu0 = process.cpuUsage();
await new Promise((resolve) => {
  const sub = feed.events$.subscribe((e) => {
    if (e.type === 'market') {
      const { timestamp: _t, localTimestamp: _l, ...rest } = e;
      writeSync(fd, JSON.stringify(rest) + '\n');
      n++;
    } else if (e.type === 'feed' && e.state === 'catalog') {
      sub.unsubscribe();
      resolve();
    }
  });
});
clearInterval(timer);
peak = Math.max(peak, sample());
closeSync(fd);
const cpu = process.cpuUsage(cpu0);
console.log(
  JSON.stringify({
    root,
    label,
    upserts: n,
    baseMiB: +(base / 2 ** 20).toFixed(1),
    peakAboveBaseMiB: +((peak - base) / 2 ** 20).toFixed(1),
    wallS: +((performance.now() - t0) / 1000).toFixed(1),
    cpuS: +((cpu.user + cpu.system) / 1e6).toFixed(1),
    malformed: feed.stats,
  }),
);
process.exit(0);
