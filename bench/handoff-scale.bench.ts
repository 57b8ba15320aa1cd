/**
 * Whether a handed batch's `take` (src/history/handoff.ts) costs the same per event at any size:
 * a listing burst's records (Gamma market pages, then Polymarket book snapshots, mapped by the real
 * mapper; synthetic, seeded: bench/gen.ts) held in one Handoff and taken at once, for batches of
 * growing size. A superlinear cost shows as ns/event growing with the batch.
 *   npx tsx bench/handoff-scale.bench.ts   (env HANDOFF_MARKETS)
 */
import { loadConfig } from '../src/config/load.js';
import type { NormalizedEvent } from '../src/core/types.js';
import { Handoff, handedRecords } from '../src/history/handoff.js';
import { PolymarketMapper } from '../src/venues/polymarket/mappers.js';
import { polyStream, T0 } from './gen.js';

const MARKETS = Number(process.env['HANDOFF_MARKETS'] ?? 20_000);
const poly = loadConfig({ env: {} }).venues.find((v) => v.protocol === 'polymarket')!;
const stream = polyStream({ seed: 7, markets: MARKETS, levels: 20, frames: 0 });
const mapper = new PolymarketMapper(poly);
const frames: NormalizedEvent[][] = [];
for (const p of stream.pages) frames.push([...mapper.map(JSON.parse(p), T0)]);
for (const s of stream.snapshots) frames.push([...mapper.map(JSON.parse(s), T0)]);
const all = frames.reduce((n, f) => n + f.length, 0);

const cpuMs = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
const rows = [];
for (const share of [1 / 16, 1 / 8, 1 / 4, 1 / 2, 1]) {
  const n = Math.round(frames.length * share);
  const h = new Handoff(() => Infinity);
  let events = 0;
  for (let i = 0; i < n; i++) {
    h.record(i + 1, 'venue_b', 2, T0, true, 0, '');
    for (const e of frames[i]!) h.event(i + 1, e);
    events += frames[i]!.length;
  }
  const a = cpuMs();
  const b = h.take()!;
  const takeMs = cpuMs() - a;
  const c = cpuMs();
  const items = handedRecords(b).reduce((x, r) => x + r.items.length, 0);
  const unpackMs = cpuMs() - c;
  if (items !== events) throw new Error(`handed ${items} of ${events}`);
  rows.push({
    records: n,
    events,
    mib: +(b.bytes.byteLength / 2 ** 20).toFixed(1),
    takeMs: Math.round(takeMs),
    takeNsPerEvent: Math.round((takeMs * 1e6) / events),
    unpackNsPerEvent: Math.round((unpackMs * 1e6) / events),
  });
}
console.log(JSON.stringify({ markets: MARKETS, frames: frames.length, events: all, rows }, null, 1));
