// What the market → groups index costs while books hold on to it (issue 34): 2×N markets listed on
// two venues under the same titles (N cross-venue groups), a book each, the signal engine's held
// groups taken for every book; then ROUNDS re-indexes, a tenth of the books changing after each (the
// rest keep what they held), the heap after a full GC over the first look-up after each. Before the
// index's serial, each re-index's whole venue → market maps stayed alive as long as any book held them.
// ROOT: a built checkout (its dist/), so two builds can be compared.
//   node --expose-gc bench/scale/index-held.mjs ROOT [N] [ROUNDS]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const root = process.argv[2] ?? '.';
const base = pathToFileURL(resolve(root)).href;
const N = Number(process.argv[3] ?? 30_000);
const ROUNDS = Number(process.argv[4] ?? 8);
const { loadConfig } = await import(`${base}/dist/src/config/load.js`);
const { EngineState, applyEvent } = await import(`${base}/dist/src/state/engine.js`);
const { MatchingService } = await import(`${base}/dist/src/matching/service.js`);
const { SignalEngine } = await import(`${base}/dist/src/signals/engine.js`);
const { VenueDirectory } = await import(`${base}/dist/src/venues/directory.js`);
const config = loadConfig({ env: {} });
const state = new EngineState(config.venues);
const dir = new VenueDirectory(config);
const T0 = Date.UTC(2026, 10, 29, 12);
const teams = ['Lakers', 'Celtics', 'Knicks', 'Bulls', 'Heat', 'Suns', 'Nets', 'Jazz', 'Kings', 'Magic'];
for (let i = 0; i < N; i++) {
  const title = `Will the ${teams[i % 10]} score over ${100 + (i % 97)}.5 points on game ${i}?`;
  for (const venue of ['venue_a', 'venue_h']) {
    const id = venue === 'venue_a' ? `KX-${i}` : `venue_h_M${i}`;
    applyEvent(state, {
      type: 'market',
      venue,
      timestamp: T0,
      localTimestamp: T0,
      marketId: id,
      title,
      eventTitle: `Game ${i}`,
      eventId: `E${i}`,
      status: 'active',
      closeTime: T0 + 86_400_000 + i * 60_000,
      yesInstrument: id,
      category: 'Sports',
    });
    applyEvent(state, { type: 'book_snapshot', venue, timestamp: T0, localTimestamp: T0, marketId: id, instrument: id, bids: [[4000, 5]], asks: [[6000, 5]] });
  }
}
const matching = new MatchingService(state, dir, undefined);
const engine = new SignalEngine(state, dir, matching);
const books = [];
for (let i = 0; i < N; i++)
  for (const [venue, id] of [
    ['venue_a', `KX-${i}`],
    ['venue_h', `venue_h_M${i}`],
  ])
    books.push([venue, id, state.books.instrument(venue, id)]);
const settle = () => {
  for (let i = 0; i < 4; i++) global.gc();
  return process.memoryUsage().heapUsed;
};
let grouped = 0;
for (const g of matching.allGroups()) grouped++;
for (const [v, id, b] of books) engine.markBook(v, id, b);
const h0 = settle();
const out = [];
for (let r = 0; r < ROUNDS; r++) {
  matching.reindex();
  // A tenth of the books change after each regroup (the rest keep what they held).
  for (let k = r; k < books.length; k += 10) engine.markBook(books[k][0], books[k][1], books[k][2]);
  out.push(((settle() - h0) / 2 ** 20).toFixed(1));
}
console.log(JSON.stringify({ root, markets: 2 * N, groups: grouped, heldMiB: out }));
