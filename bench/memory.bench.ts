/**
 * Memory of the engine state at scale: 100,000 markets with a 10-level book on both sides, built
 * through the mappers and applyEvent (bench/build.ts): catalog records, quotes, books, open
 * candles. RSS and heap after a full GC (run with --expose-gc), with the mappers' own per-market
 * book state alive (as in the service) and without it (the EngineState alone).
 */
import { loadConfig } from '../src/config/load.js';
import { buildState } from './build.js';
import { begin, hasGc, memory, mib, record, type Row } from './lib.js';

const MARKETS = 100_000;
const LEVELS = 10;
const TARGET_GIB = 1;

begin(
  'Memory at 100k markets',
  'Resident and heap memory of the engine state holding 100,000 markets (half on the Kalshi-protocol venue, half on the Polymarket-protocol venue), each with a 10-level book on both sides, built from synthetic wire-format traffic through the real mappers and applyEvent.',
);
if (!hasGc()) console.log('WARNING: run with --expose-gc, figures include garbage\n');

const venues = loadConfig({ env: {} }).venues;
const base = memory();
const t0 = performance.now();
const built = buildState(venues, { markets: MARKETS, levels: LEVELS, seed: 21 });
const buildSec = (performance.now() - t0) / 1000;
const withMappers = memory();
const s = built.state;
const counts = `${s.catalog.size.toLocaleString('en-US')} catalog records, ${s.quotes.size.toLocaleString('en-US')} quotes, ${s.books.size.toLocaleString('en-US')} books`;
built.mappers = [];
const stateOnly = memory();
if (s.catalog.size !== MARKETS || s.books.size !== MARKETS) throw new Error(`built ${counts}, expected ${MARKETS} of each`);

const row = (label: string, m: ReturnType<typeof memory>, baseline = false): Row => ({
  label,
  baseline,
  rss: mib(m.rss),
  heap: mib(m.heapUsed),
  ext: mib(m.external),
  perMarket: Math.round((m.heapUsed + m.external - base.heapUsed - base.external) / MARKETS),
});
const rssGiB = withMappers.rss / 1024 ** 3;
record(
  {
    title: 'RSS and heap after GC',
    columns: [
      { key: 'rss', title: 'RSS MiB', digits: 1 },
      { key: 'heap', title: 'heap used MiB', digits: 1 },
      { key: 'ext', title: 'external MiB', digits: 1 },
      { key: 'perMarket', title: 'bytes/market (heap + external over empty)' },
    ],
    ratio: { metric: 'rss', title: 'RSS vs empty process' },
    target: {
      text: `< ${TARGET_GIB} GiB RSS for 100k markets with 10-level books (measured ${rssGiB.toFixed(2)} GiB with the mappers' book state alive)`,
      met: rssGiB < TARGET_GIB,
    },
    interpretation: `100k markets take ${mib(withMappers.rss - base.rss).toLocaleString('en-US')} MiB of RSS over the empty process, ${rssGiB < TARGET_GIB ? 'within' : 'over'} the 1 GiB target; the mappers' own copies of the books (Kalshi's relative-delta sizes, Polymarket's check books) account for ${mib(withMappers.heapUsed - stateOnly.heapUsed).toLocaleString('en-US')} MiB of heap.`,
    notes: [
      `${counts}; ${built.events.toLocaleString('en-US')} events applied in ${buildSec.toFixed(1)} s (${built.kalshi.toLocaleString('en-US')} Kalshi markets from \`/markets\` pages + \`orderbook_snapshot\` + \`ticker\`; ${built.polymarket.toLocaleString('en-US')} Polymarket markets from Gamma \`/markets\` pages + the YES token's \`book\`).`,
      'Figures after a full GC. RSS does not shrink when the heap does (V8 keeps freed pages), so the "state only" RSS is an upper bound; its heap figure is exact.',
    ],
  },
  [
    row('empty process (modules and config loaded)', base, true),
    row('100k markets, mappers alive (as served)', withMappers),
    row('100k markets, EngineState only', stateOnly),
  ],
);
