import { readFileSync } from 'node:fs';
import { from, map } from 'rxjs';
import type { Config, Protocol } from '../config/schema.js';
import { PROTOCOLS } from '../config/schema.js';
import { OrderBook, BookIntegrityError } from '../core/book.js';
import type { BookDelta, NormalizedEvent } from '../core/types.js';
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
}

/**
 * Runs frames through a protocol's mapper on the live feed's frame path (mapFrames: parse,
 * malformed counting, upsert de-duplication) and, for `--book`, through the one book contract,
 * per instrument as the venue names it.
 */
export function normalizeFrames(config: Config, protocol: Protocol, rawFrames: readonly unknown[], venueLabel?: string): NormalizeResult {
  const venue = config.venues.find((v) => (venueLabel ? v.label === venueLabel || v.slug === venueLabel : v.protocol === protocol));
  if (!venue) throw new Error(venueLabel ? `unknown venue ${venueLabel}` : `no venue in the registry speaks ${protocol}`);
  const mapper = PROTOCOL_MODULES[protocol].createMapper(venue);
  const events: NormalizedEvent[] = [];
  const books = new Map<string, OrderBook>();
  let gaps = 0;
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
    } else if (ev.type === 'book_delta') applyDelta(books.get(ev.instrument), ev);
  });
  const out: NormalizeResult['books'] = {};
  for (const [id, b] of books) {
    if (!b.ready) continue;
    out[id] = {
      bids: b.bids.levels().map(([p, s]) => [p / 100, s]),
      asks: b.asks.levels().map(([p, s]) => [p / 100, s]),
    };
  }
  return { events, books: out, gaps, malformed: Object.fromEntries(mapper.stats.malformed) };
}

/** Applies a delta to a ready book; one that breaks the book's integrity resets it. */
function applyDelta(b: OrderBook | undefined, ev: BookDelta): void {
  if (!b || !b.ready) return;
  try {
    b.apply(ev.changes, ev.timestamp);
  } catch (e) {
    if (!(e instanceof BookIntegrityError)) throw e;
    b.reset();
  }
}

export function isProtocol(p: string): p is Protocol {
  return (PROTOCOLS as readonly string[]).includes(p);
}

export function normalizeFile(
  config: Config,
  protocol: string,
  file: string,
  opts: { book?: boolean; venue?: string },
  out: (s: string) => void,
  err: (s: string) => void,
): number {
  if (!isProtocol(protocol)) {
    err(`unknown protocol "${protocol}"; expected one of ${PROTOCOLS.join(', ')}`);
    return 2;
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    err(`cannot read ${file}: ${(e as Error).message}`);
    return 2;
  }
  const r = normalizeFrames(config, protocol, readFrames(text), opts.venue);
  if (opts.book) out(JSON.stringify(r.books));
  else for (const ev of r.events) out(JSON.stringify(ev));
  if (r.gaps > 0) err(`sequence gaps: ${r.gaps}`);
  const bad = Object.entries(r.malformed);
  if (bad.length > 0) err(`malformed frames dropped: ${bad.map(([k, n]) => `${k}=${n}`).join(', ')}`);
  return 0;
}
