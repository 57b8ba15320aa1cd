/**
 * The fan-out's conflation (src/ws/conflate.ts) alone, per event-loop turn: 1–6 markets marked (a
 * book change and the quote change it brings each), spread over eight venues as the live ingest
 * spreads them, then the flush, into a hub that publishes nothing (what is left is the dirty set's
 * own bookkeeping). CONFLATE_BASE (another build's dist/src/ws/conflate.js) runs that build's
 * HubConflation in alternating rounds, a before/after in one run. Printed, not written:
 * BENCHMARKS.md quotes it.
 */
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { HubConflation } from '../../src/ws/conflate.js';
import type { QuoteRecord } from '../../src/state/quotes.js';

type Conflation = Pick<HubConflation, 'markBook' | 'markQuote' | 'flush'>;
type Make = (hub: { onBook(): void; onQuote(): void }) => Conflation;

const TURNS = Number(process.env['CONFLATE_TURNS'] ?? 200_000);
const ROUNDS = Number(process.env['CONFLATE_ROUNDS'] ?? 5);
const venues = ['venue_a', 'venue_b', 'venue_c', 'venue_d', 'venue_e', 'venue_f', 'venue_g', 'venue_h'];
const ids = Array.from({ length: 300 }, (_, i) => `M${i}`);
const quotes = venues.map((venue) => ids.map((marketId) => ({ venue, marketId }) as unknown as QuoteRecord));
const at = { timestamp: 1, localTimestamp: 2 };

/** µs per turn of `TURNS` turns through a fresh conflation. */
function run(make: Make): number {
  const c = make({ onBook: () => undefined, onQuote: () => undefined });
  let k = 0;
  const t0 = performance.now();
  for (let turn = 0; turn < TURNS; turn++) {
    for (let i = 0, n = 1 + (turn % 6); i < n; i++, k++) {
      const v = (k * 7) % 8;
      const m = (k * 13) % 300;
      c.markBook(venues[v]!, ids[m]!, at);
      c.markQuote(quotes[v]![m]!, at);
    }
    c.flush();
  }
  return ((performance.now() - t0) * 1000) / TURNS;
}

const builds: [string, Make][] = [['this build', (hub) => new HubConflation(hub)]];
const base = process.env['CONFLATE_BASE'];
if (base) {
  const mod = (await import(pathToFileURL(base).href)) as { HubConflation: new (hub: unknown) => Conflation };
  builds.push(['base', (hub) => new mod.HubConflation(hub)]);
}
const times = new Map<string, number[]>(builds.map(([name]) => [name, []]));
const load = [loadavg()[0]!];
for (let r = 0; r < ROUNDS; r++)
  for (const [name, make] of r % 2 === 0 ? builds : [...builds].reverse()) {
    times.get(name)!.push(run(make));
    load.push(loadavg()[0]!);
  }
const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
for (const [name, xs] of times) console.log(`${name}: ${med(xs).toFixed(2)} µs per turn (rounds ${xs.map((x) => x.toFixed(2)).join(' / ')})`);
if (base) console.log(`this build / base: ${(med(times.get('this build')!) / med(times.get('base')!)).toFixed(2)}×`);
console.log(`load average (1 min): ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)}`);
