import { describe, expect, it } from 'vitest';
import { kalshiStream, venueOf } from '../../bench/gen.js';
import { FloorBooks } from '../../bench/ingest-floor.js';
import { loadConfig } from '../../src/config/load.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { KalshiMapper } from '../../src/venues/kalshi/mappers.js';

// The ingest bench's floor row is only a floor if it does the same work: it must end with the books
// the mapper and the state end with, level for level, over the same seeded frames.
describe('the ingest floor (bench/ingest-floor.ts)', () => {
  const config = loadConfig({ env: {} });
  const kv = venueOf(config.venues, 'kalshi');
  const levels = (x: readonly (readonly [number, number])[]): string => x.map(([p, s]) => `${p}x${s}`).join(',');

  it('ends with the same books as the Kalshi mapper and the state, and refuses a frame out of sequence', () => {
    const ks = kalshiStream({ seed: 5, markets: 40, sids: 3, levels: 10, deltas: 6_000 });
    const mapper = new KalshiMapper(kv);
    const state = new EngineState(config.venues);
    for (const text of [...ks.pages, ...ks.snapshots]) for (const ev of mapper.map(JSON.parse(text), 1)) applyEvent(state, ev);
    const floor = new FloorBooks(ks.snapshots);
    for (let i = 0; i < ks.deltas.length; i++) {
      for (const ev of mapper.map(JSON.parse(ks.deltas[i]!), ks.local[i]!)) applyEvent(state, ev);
      expect(floor.apply(ks.deltas[i]!)).toBe(ks.market[i]);
    }
    const tickers = ks.ids.map((m) => m.ticker);
    const want = tickers
      .map((t) => {
        const b = state.books.instrument(kv.label, t)!;
        return `${t}|${levels(b.levelsOf(true, 10))}|${levels(b.levelsOf(false, 10))}`;
      })
      .join('\n');
    expect(floor.digest(tickers)).toBe(want);
    expect(floor.refused).toBe(0);
    // A frame seen twice is out of sequence on its sid: the mapper resyncs, the floor refuses it.
    expect(floor.apply(ks.deltas[ks.deltas.length - 1]!)).toBe(-1);
    expect(floor.refused).toBe(1);
  });
});
