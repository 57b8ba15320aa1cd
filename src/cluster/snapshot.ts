import { Packr } from 'msgpackr';
import type { Level } from '../core/types.js';
import type { MarketRecord } from '../state/catalog.js';
import type { EngineState } from '../state/engine.js';
import type { VenueHealth } from '../state/health.js';
import type { QuoteRecord } from '../state/quotes.js';

/**
 * What an edge starts from: the core's catalog, quotes and books (enough for REST reads), the
 * hub's last seq per topic and its epoch, and the stream sequence they correspond to (every
 * stream message up to `streamSeq` is in them; the edge follows from the next).
 */
export interface StateSnapshot {
  readonly epoch: number;
  readonly streamSeq: number;
  /** The number (`Cb-Seq`) of the last message sent before the cut: the edge expects the next one after it. */
  readonly pubSeq: number;
  /** Each venue's feed health as the core sees it, so an edge's /status starts from it. */
  readonly health: readonly SnapshotHealth[];
  readonly takenAt: number;
  readonly seqs: readonly (readonly [string, number])[];
  readonly catalog: readonly MarketRecord[];
  readonly quotes: readonly QuoteRecord[];
  readonly books: readonly { venue: string; instrument: string; bids: readonly Level[]; asks: readonly Level[]; ts: number }[];
}

/** A venue's health in a snapshot (VenueHealth without its per-instrument resync map). */
export type SnapshotHealth = Omit<VenueHealth, 'resyncing'>;

/** The state's catalog, quotes and ready books, copied synchronously (a consistent cut). */
export function takeSnapshot(state: EngineState, hub: { epoch: number; seqs(): [string, number][] }, now: number): Omit<StateSnapshot, 'streamSeq' | 'pubSeq'> {
  const books: StateSnapshot['books'][number][] = [];
  for (const [venue, instrument, b] of state.books.entries())
    if (b.ready) books.push({ venue, instrument, bids: b.levelsOf(true), asks: b.levelsOf(false), ts: b.timestamp });
  return {
    epoch: hub.epoch,
    takenAt: now,
    seqs: hub.seqs(),
    health: [...state.health.venues.values()].map(({ resyncing: _, ...h }) => ({ ...h })),
    catalog: [...state.catalog.all()].map((m) => ({ ...m })),
    quotes: [...state.quotes.all()].map((q) => ({ ...q })),
    books,
  };
}

/** Restores a snapshot into an (empty or stale) state, as persistence restores DATA_DIR. */
export function restoreSnapshot(state: EngineState, s: StateSnapshot): void {
  for (const m of s.catalog) {
    state.catalog.restore(m);
    state.books.link(m.venue, m.marketId, m.yesInstrument, m.noInstrument);
  }
  for (const q of s.quotes) state.quotes.restore(q);
  for (const b of s.books) state.books.restore(b.venue, b.instrument, b.bids, b.asks, b.ts);
  for (const h of s.health ?? []) {
    const mine = state.health.venues.get(h.venue);
    if (mine) Object.assign(mine, h);
  }
}

const packr = new Packr({ useRecords: false });

/** msgpackr encoding of a snapshot. */
export function encodeSnapshot(s: StateSnapshot): Uint8Array {
  return packr.pack(s);
}

/** Decodes a snapshot. */
export function decodeSnapshot(data: Uint8Array): StateSnapshot {
  return packr.unpack(data) as StateSnapshot;
}
