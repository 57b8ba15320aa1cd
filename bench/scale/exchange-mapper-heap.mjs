// The heap the exchange-protocol mappers hold for status frames (issue 34): ROOT's dist/ world at
// sim.scale SCALE (default 166, the 108k service's; SYNTHETIC DATA), each exchange-protocol venue's
// `GET /v1/events` document served by its simulated venue, fetched as the feed fetches it, then every
// document mapped by one fresh `ExchangeMapper` per venue. The documents' text is let go as each is
// mapped; reported: the heap held after a full GC with the mappers kept, against before. Then one status frame per market (the event going live) is
// mapped, and every upsert both passes emit, timestamps dropped, is hashed, so that two builds can
// be held to the same output (OUT=file writes the lines); then the mappers are let go and what that frees is read.
//   node --expose-gc bench/scale/exchange-mapper-heap.mjs ROOT [SCALE]
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = process.argv[2];
const scale = Number(process.argv[3] ?? 166);
const dist = `${pathToFileURL(resolve(root)).href}/dist/src`;
const { loadConfig } = await import(`${dist}/config/load.js`);
const { createWorld } = await import(`${dist}/sim/world.js`);
const { SIM_SERVERS } = await import(`${dist}/sim/protocols/index.js`);
const { createExchangeMapper } = await import(`${dist}/venues/exchange/mappers.js`);

const cfg = loadConfig({ env: {} });
const venues = cfg.venues.filter((v) => v.protocol === 'exchange' && v.enabled);
let texts = [];
{
  // A fixed clock: the listings' times follow it, and two builds' outputs are then the same bytes.
  const world = createWorld({ seed: cfg.sim.seed, venues: cfg.venues, scale, ticksPerSecond: 0, now: () => Date.UTC(2026, 10, 30, 12) });
  for (const v of venues) {
    const s = await SIM_SERVERS.exchange(world, v, { host: '127.0.0.1', port: 0 });
    const res = await fetch(`${s.endpoints.rest}/events`);
    texts.push([v, await res.text()]);
    await s.close();
  }
}
// The world stays reachable for a while after its servers close (a server's upgrade handler holds it): it is in
// `before` and in the first figure alike, and goes during the status pass, hence the third figure, what letting
// the mappers go frees at the end.
await new Promise((r) => setTimeout(r, 1_000));
const gcHeap = () => {
  for (let i = 0; i < 4; i++) globalThis.gc();
  return process.memoryUsage().heapUsed;
};
const hash = createHash('sha256');
const seen = (events) => {
  for (const e of events) {
    if (e.type !== 'market' && e.type !== 'market_status') continue;
    const { timestamp: _t, localTimestamp: _l, ...rest } = e;
    const line = JSON.stringify(rest) + '\n';
    hash.update(line);
    if (process.env.OUT) appendFileSync(process.env.OUT, line);
  }
};
const docs = texts.map(([v, t]) => [v, t.length]);
const before = gcHeap();
const mappers = [];
let markets = 0;
const ids = [];
const t0 = process.cpuUsage();
for (let i = 0; i < texts.length; i++) {
  const [v, text] = texts[i];
  texts[i] = undefined;
  const m = createExchangeMapper(v);
  const out = m.map(JSON.parse(text), 1_000);
  seen(out);
  const mine = [];
  for (const e of out) if (e.type === 'market') mine.push(e.yesInstrument);
  markets += mine.length;
  ids.push(mine);
  mappers.push(m);
}
texts = undefined;
const cpu = process.cpuUsage(t0);
const held = gcHeap() - before;
// One status frame per market: subscribed (a snapshot starts its seq), then its event goes live.
let statuses = 0;
for (let i = 0; i < mappers.length; i++) {
  const m = mappers[i];
  for (const id of ids[i]) {
    m.map({ type: 'snapshot', market: id, book: 'yes', seq: 1, bids: [], asks: [], ts: 2_000 }, 2_000);
    const out = m.map({ type: 'status', market: id, seq: 2, status: 'open', result: null, event_state: 'live', ts: 3_000 }, 3_000);
    seen(out);
    statuses += out.length;
  }
}
// After the status pass (each market's seq and ready book, the same in any build, and what the frames changed).
const heldAfterStatus = gcHeap() - before;
// And what letting the mappers go frees: their retained size, whatever else moved meanwhile.
mappers.length = 0;
const freed = heldAfterStatus - (gcHeap() - before);
const MiB = (b) => +(b / 2 ** 20).toFixed(2);
console.log(
  JSON.stringify({
    root,
    scale,
    venues: venues.map((v) => v.label),
    docMiB: docs.map(([, n]) => MiB(n)),
    markets,
    heldHeapMiB: MiB(held),
    bytesPerMarket: Math.round(held / markets),
    mapCpuS: +((cpu.user + cpu.system) / 1e6).toFixed(2),
    statusEvents: statuses,
    heldAfterStatusMiB: MiB(heldAfterStatus),
    mappersRetainMiB: MiB(freed),
    outputSha256: hash.digest('hex').slice(0, 16),
  }),
);
