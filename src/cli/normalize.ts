import { readFileSync } from 'node:fs';
import { from, map } from 'rxjs';
import type { Config, Protocol } from '../config/schema.js';
import { PROTOCOLS } from '../config/schema.js';
import { OrderBook, BookIntegrityError } from '../core/book.js';
import type { BookDelta, NormalizedEvent } from '../core/types.js';
import type { Mapper } from '../venues/common/mapper.js';
import { mapFrames, type RawFrame } from '../venues/common/frames.js';
import { PROTOCOL_MODULES } from '../venues/index.js';

/** Reads a file of raw frames: a JSON array in arrival order, a single JSON document, or JSON lines. */
export function readFrames(text: string): unknown[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    try {
      const v = JSON.parse(trimmed) as unknown;
      // One JSON document: an array of frames in arrival order, or a single frame/response.
      return Array.isArray(v) ? v : [v];
    } catch {
      // Not one JSON document: fall through to JSON lines (a line may itself be an array frame).
    }
  }
  const out: unknown[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    out.push(line); // parsed by the mapper path so a bad line is counted, not fatal
  }
  return out;
}

export interface NormalizeResult {
  readonly events: NormalizedEvent[];
  readonly books: Record<string, { bids: [number, number][]; asks: [number, number][] }>;
  readonly gaps: number;
  readonly malformed: Record<string, number>;
  /** Frames of types the protocol does not know, by type: dropped. */
  readonly unknown: Record<string, number>;
  /** Frames with nothing to map (acks, heartbeats, variants we do not use). */
  readonly ignored: number;
  /** The mapper's reasons for what it ignored or mapped with less than full knowledge. */
  readonly reasons: Record<string, number>;
  /** Book deltas of an instrument with no book yet (no snapshot before them): not applied (`--book`). */
  readonly deltasWithoutBook: number;
  /** What the market list taught the mapper: markets mapped, and entries it could not use. */
  readonly marketList?: { readonly markets: number; readonly unusable: number };
}

/**
 * Runs frames through a protocol's mapper on the live feed's frame path (mapFrames: parse,
 * malformed counting, upsert de-duplication) and, for `--book`, through the one book contract,
 * per instrument as the venue names it. `marketFrames` (the venue's own market list, e.g. a Gamma
 * `/markets` response) go through the mapper first, so it knows the markets the frames name;
 * their events are not part of the output.
 */
export function normalizeFrames(
  config: Config,
  protocol: Protocol,
  rawFrames: readonly unknown[],
  venueLabel?: string,
  marketFrames?: readonly unknown[],
): NormalizeResult {
  const venue = config.venues.find((v) => (venueLabel ? v.label === venueLabel || v.slug === venueLabel : v.protocol === protocol));
  if (!venue) throw new Error(venueLabel ? `unknown venue ${venueLabel}` : `no venue in the registry speaks ${protocol}`);
  const mapper = PROTOCOL_MODULES[protocol].createMapper(venue);
  const marketList = marketFrames ? learnMarkets(mapper, marketFrames) : undefined;
  const events: NormalizedEvent[] = [];
  const books = new Map<string, OrderBook>();
  let gaps = 0;
  let deltasWithoutBook = 0;
  // The feed runtime's frame path: JSON parse (a bad line is counted, not fatal), mapper, upsert de-duplication.
  const frames$ = from(rawFrames).pipe(
    map((data): RawFrame => ({ data, localTimestamp: Date.now() })),
    mapFrames(mapper),
  );
  frames$.subscribe((ev) => {
    events.push(ev);
    if (ev.type === 'feed' && ev.state === 'gap') {
      gaps++;
      if (ev.instrument) books.get(ev.instrument)?.reset();
      else for (const b of books.values()) b.reset();
    } else if (ev.type === 'book_snapshot') {
      let b = books.get(ev.instrument);
      if (!b) books.set(ev.instrument, (b = new OrderBook(ev.instrument)));
      b.snapshot(ev.bids, ev.asks, ev.timestamp);
    } else if (ev.type === 'book_delta' && !applyDelta(books.get(ev.instrument), ev)) deltasWithoutBook++;
  });
  const out: NormalizeResult['books'] = {};
  for (const [id, b] of books) {
    if (!b.ready) continue;
    out[id] = {
      bids: b.levelsOf(true).map(([p, s]) => [p / 100, s]),
      asks: b.levelsOf(false).map(([p, s]) => [p / 100, s]),
    };
  }
  const stats = mapper.stats;
  const malformed = Object.fromEntries(stats.malformed);
  // What the market list alone caused is reported with it, not as the recording's.
  if (marketList) for (const [k, n] of Object.entries(marketList.malformed)) if ((malformed[k] = (malformed[k] ?? 0) - n) <= 0) delete malformed[k];
  return {
    events,
    books: out,
    gaps,
    malformed,
    unknown: Object.fromEntries(stats.unknown),
    ignored: stats.ignored - (marketList?.ignored ?? 0),
    reasons: mapper.reasons?.() ?? {},
    deltasWithoutBook,
    ...(marketList ? { marketList: { markets: marketList.markets, unusable: marketList.unusable } } : {}),
  };
}

/** Maps a market list through `mapper` so it learns the markets (a mapper learns from every market it maps). */
function learnMarkets(mapper: Mapper, frames: readonly unknown[]): { markets: number; unusable: number; malformed: Record<string, number>; ignored: number } {
  let markets = 0;
  const before = mapper.stats.malformedTotal;
  from(frames)
    .pipe(
      map((data): RawFrame => ({ data, localTimestamp: Date.now() })),
      mapFrames(mapper),
    )
    .subscribe((ev) => {
      if (ev.type === 'market') markets++;
    });
  const malformed = Object.fromEntries(mapper.stats.malformed);
  return { markets, unusable: mapper.stats.malformedTotal - before, malformed, ignored: mapper.stats.ignored };
}

/** Applies a delta to a ready book (one that breaks the book's integrity resets it); false when there is no book to apply it to. */
function applyDelta(b: OrderBook | undefined, ev: BookDelta): boolean {
  if (!b || !b.ready) return false;
  try {
    b.apply(ev.changes, ev.timestamp);
  } catch (e) {
    if (!(e instanceof BookIntegrityError)) throw e;
    b.reset();
  }
  return true;
}

export function isProtocol(p: string): p is Protocol {
  return (PROTOCOLS as readonly string[]).includes(p);
}

/**
 * `crossbook normalize`: prints the normalized events of a file of raw frames as JSON lines (or,
 * with `book`, the rebuilt books), and on stderr what was dropped or ignored and why, per reason.
 * `markets` names the venue's market list (a Gamma `/markets` response for polymarket), read
 * before the frames so their tokens resolve to markets and YES/NO sides. Returns the exit code.
 */
export function normalizeFile(
  config: Config,
  protocol: string,
  file: string,
  opts: { book?: boolean | undefined; venue?: string | undefined; markets?: string | undefined },
  out: (s: string) => void,
  err: (s: string) => void,
): number {
  if (!isProtocol(protocol)) {
    err(`unknown protocol "${protocol}"; expected one of ${PROTOCOLS.join(', ')}`);
    return 2;
  }
  const text = readText(file, err);
  const marketText = opts.markets === undefined ? '' : readText(opts.markets, err);
  if (text === undefined || marketText === undefined) return 2;
  const r = normalizeFrames(config, protocol, readFrames(text), opts.venue, opts.markets === undefined ? undefined : readFrames(marketText));
  if (opts.book) out(JSON.stringify(r.books));
  else for (const ev of r.events) out(JSON.stringify(printable(ev)));
  report(r, opts.book === true, err);
  return 0;
}

function readText(file: string, err: (s: string) => void): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    err(`cannot read ${file}: ${(e as Error).message}`);
    return undefined;
  }
}

/** A trade whose YES price is unknown (a token of no known market) says so: yesPrice null, takerSide "unknown". */
function printable(ev: NormalizedEvent): unknown {
  if (ev.type === 'trade' && Number.isNaN(ev.yesPrice)) return { ...ev, yesPrice: null, takerSide: 'unknown' };
  return ev;
}

/** The stderr report: what was dropped, ignored or only partly mapped, with counts per reason. */
function report(r: NormalizeResult, book: boolean, err: (s: string) => void): void {
  const list = (o: Record<string, number>): string =>
    Object.entries(o)
      .map(([k, n]) => `${k}=${n}`)
      .join(', ');
  if (r.marketList) err(`market list: ${r.marketList.markets} markets learned${r.marketList.unusable ? `, ${r.marketList.unusable} entries not usable` : ''}`);
  if (r.gaps > 0) err(`sequence gaps: ${r.gaps}`);
  if (Object.keys(r.malformed).length > 0) err(`malformed frames dropped: ${list(r.malformed)}`);
  if (Object.keys(r.unknown).length > 0) err(`unknown frames dropped: ${list(r.unknown)}`);
  if (r.ignored > 0) err(`frames ignored (nothing to map): ${r.ignored}`);
  if (Object.keys(r.reasons).length > 0) err(`by reason: ${list(r.reasons)}`);
  if (book && r.deltasWithoutBook > 0) err(`book deltas without a book before them (not applied): ${r.deltasWithoutBook}`);
  if (r.events.length === 0) err('no events: every frame was dropped or ignored (reasons above)');
}
