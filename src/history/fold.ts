import type { VenueConfig } from '../config/schema.js';
import type { VenueLabel } from '../core/types.js';
import { applyEvent, EngineState } from '../state/engine.js';
import type { QuoteRecord } from '../state/quotes.js';
import type { BookStart, MarketPart, SeqEvent } from './slice.js';

/**
 * A market's YES and NO instruments as its upserts named them so far ('' for none): what a fold of
 * its events needs to give its books their roles (which book is the YES, which the NO, when its
 * upsert came in an earlier slice).
 */
export type Link = readonly [yes: string, no: string];

/** A market's start as the open slice holds it: its part without events, and its link (kept only there: the slice file holds the part). */
export interface StartRecord extends MarketPart {
  readonly link?: Link | undefined;
}

/** A market's state as nothing yet: the start of a market first seen in a slice. */
export const EMPTY_START: StartRecord = { books: [], quote: undefined, events: [] };

/** A market to rebuild: its key in a slice, its start and its events in the slice, in capture order. */
export interface MarketRun {
  readonly key: string;
  readonly venue: VenueLabel;
  readonly marketId: string;
  readonly start: StartRecord;
  readonly events: readonly SeqEvent[];
}

/**
 * Puts each market's start (books with their ready flags, quote) in `s`, then applies the markets'
 * events and their venues' feed events up to `t` with `applyEvent`, all merged by sequence number
 * as the capture ordered them (at one sequence number a market's events before its venue's): a
 * venue's reset reaches every book of the venue in `s` once, at its moment, as live. The caller
 * links the markets' instruments first.
 */
export function applyRuns(s: EngineState, runs: readonly MarketRun[], venueEvents: (v: VenueLabel) => readonly SeqEvent[], t: number): void {
  const merged: SeqEvent[] = [];
  const venues = new Set<VenueLabel>();
  for (const r of runs) {
    for (const [ins, bids, asks, ts, recvTs, ready] of r.start.books) {
      const b = s.books.restore(r.venue, ins, bids, asks, ts, recvTs);
      if (!ready) b.reset();
    }
    if (r.start.quote) s.quotes.restore({ ...r.start.quote });
    for (const e of r.events) merged.push(e);
    venues.add(r.venue);
  }
  for (const v of venues) for (const e of venueEvents(v)) merged.push(e);
  // A stable sort: each market's events keep their order, and a venue's event after a market's of the same record.
  merged.sort((a, b) => a[0] - b[0]);
  for (const [, e] of merged) if (e.localTimestamp <= t) applyEvent(s, e);
}

/**
 * Each market's state at the end of a slice from its start and its events in the slice (and its
 * venue's feed events): what it starts the next slice with. Undefined for a market that has
 * nothing a slice keeps (no book, no quote, no instruments named). One scratch state for the runs.
 */
export function foldRuns(
  venues: readonly VenueConfig[],
  runs: readonly MarketRun[],
  venueEvents: (v: VenueLabel) => readonly SeqEvent[],
): (StartRecord | undefined)[] {
  const s = new EngineState(venues, { tradeCapacity: 1, candles: false });
  for (const r of runs) {
    const [yes, no] = r.start.link ?? NO_LINK;
    s.books.link(r.venue, r.marketId, yes || undefined, no || undefined);
  }
  applyRuns(s, runs, venueEvents, Infinity);
  return runs.map((r) => endOf(s, r, linkOf(r)));
}

const NO_LINK: Link = ['', ''];

/** The market's link after its events: each upsert's instruments replace the ones named before (as the catalog merges them). */
function linkOf(r: MarketRun): Link {
  let [yes, no] = r.start.link ?? NO_LINK;
  for (const [, e] of r.events)
    if (e.type === 'market') {
      if (e.yesInstrument !== undefined) yes = e.yesInstrument;
      if (e.noInstrument !== undefined) no = e.noInstrument;
    }
  return [yes, no];
}

/** A market's books (its own id's book first, then the others in the order they were first snapshot) and quote in `s`, as a start. */
function endOf(s: EngineState, r: MarketRun, link: Link): StartRecord | undefined {
  const { venue, marketId } = r;
  const ins: string[] = [];
  if (s.books.instrument(venue, marketId) !== undefined) ins.push(marketId);
  for (const b of r.start.books) if (!ins.includes(b[0])) ins.push(b[0]);
  for (const [, e] of r.events) if (e.type === 'book_snapshot' && !ins.includes(e.instrument)) ins.push(e.instrument);
  const books: BookStart[] = [];
  for (const i of ins) {
    const b = s.books.instrument(venue, i);
    if (b) books.push([i, b.levelsOf(true), b.levelsOf(false), b.timestamp, b.recvTs, b.ready]);
  }
  const q = s.quotes.get(venue, marketId);
  const quote = q && ({ ...q } as QuoteRecord);
  // What BookStore.link stores: a NO instrument, or a YES one other than the market's id.
  const linked = link[1] !== '' || (link[0] !== '' && link[0] !== marketId);
  if (books.length === 0 && quote === undefined && !linked) return undefined;
  return linked ? { books, quote, events: [], link } : { books, quote, events: [] };
}
