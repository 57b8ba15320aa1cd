/**
 * What handing the live events to the history index's thread (src/history/handoff.ts) costs the
 * main thread per event: the capture's tap (`record` per record, `event` per event) and each
 * sync's `take` (one msgpack buffer of the batch), against msgpackr `pack` of the event alone (what
 * the capture's `event` records cost) and the Kalshi mapper on the same frames (what the thread no
 * longer runs). Kalshi frames synthetic, seeded (bench/gen.ts), mapped once by the real mapper;
 * batches of HANDOFF_BATCH events (a sync's second; the 108k world makes ~760 a second).
 *   npx tsx bench/history-handoff.bench.ts   (env HANDOFF_DELTAS, HANDOFF_BATCH, HANDOFF_ROUNDS)
 */
import { pack } from 'msgpackr';
import { loadConfig } from '../src/config/load.js';
import type { NormalizedEvent } from '../src/core/types.js';
import { Handoff, handedRecords } from '../src/history/handoff.js';
import { KalshiMapper } from '../src/venues/kalshi/mappers.js';
import { kalshiStream, T0 } from './gen.js';
import { median } from './lib.js';

const DELTAS = Number(process.env['HANDOFF_DELTAS'] ?? 200_000);
const BATCH = Number(process.env['HANDOFF_BATCH'] ?? 1_000);
const ROUNDS = Number(process.env['HANDOFF_ROUNDS'] ?? 5);
const kalshi = loadConfig({ env: {} }).venues.find((v) => v.protocol === 'kalshi')!;
const stream = kalshiStream({ seed: 11, markets: 2_000, sids: 10, levels: 10, deltas: DELTAS, rate: 1_000 });

const cpuNs = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) * 1000;
};

// The events as the live path makes them (one per delta frame here), with their frame's receive time.
const mapper = new KalshiMapper(kalshi);
const frames: { t: number; events: NormalizedEvent[] }[] = [];
const mapStart = cpuNs();
for (const f of stream.snapshots) mapper.map(JSON.parse(f), T0);
const afterSnapshots = cpuNs();
let events = 0;
for (let i = 0; i < DELTAS; i++) {
  const t = stream.local[i]!;
  const evs = [...mapper.map(JSON.parse(stream.deltas[i]!), t)];
  events += evs.length;
  frames.push({ t, events: evs });
}
const mapNs = (cpuNs() - afterSnapshots) / events;
void mapStart;

const rows: Record<string, number[]> = { tap: [], take: [], pack: [], unpackOnThread: [] };
for (let round = 0; round < ROUNDS; round++) {
  const h = new Handoff(() => Infinity);
  const taken = [];
  let tapNs = 0;
  let takeNs = 0;
  let seq = 0;
  let n = 0;
  for (let i = 0; i < frames.length;) {
    const a = cpuNs();
    for (; i < frames.length && n < BATCH; i++) {
      const f = frames[i]!;
      h.record(++seq, 'venue_a', 1, f.t, true, 1, '');
      for (const e of f.events) h.event(seq, e);
      n += f.events.length;
    }
    const b = cpuNs();
    taken.push(h.take()!);
    tapNs += b - a;
    takeNs += cpuNs() - b;
    n = 0;
  }
  const c = cpuNs();
  for (const f of frames) for (const e of f.events) pack(e);
  const packNs = cpuNs() - c;
  const d = cpuNs();
  let items = 0;
  for (const b of taken) for (const r of handedRecords(b)) items += r.items.length;
  const unpackNs = cpuNs() - d;
  if (items !== events) throw new Error(`handed ${items} events of ${events}`);
  rows.tap!.push(tapNs / events);
  rows.take!.push(takeNs / events);
  rows.pack!.push(packNs / events);
  rows.unpackOnThread!.push(unpackNs / events);
}
console.log(
  JSON.stringify({
    events,
    batch: BATCH,
    rounds: ROUNDS,
    nsPerEvent: Object.fromEntries(
      Object.entries(rows).map(([k, v]) => [k, { median: Math.round(median(v)), min: Math.round(Math.min(...v)), max: Math.round(Math.max(...v)) }]),
    ),
    mapperNsPerEvent: Math.round(mapNs),
  }),
);
