import { z } from 'zod';

/**
 * PredictIt public market data, as served by `https://www.predictit.org/api/marketdata`:
 *
 * - `GET /all` → `{"markets": [Market]}` (every open market)
 * - `GET /markets/{id}` → `Market`
 *
 * A PredictIt "market" is a question with one or more contracts; each contract trades YES and NO
 * shares on a linked book (buying NO at q is selling YES at 1 − q). Prices are JSON numbers in
 * dollars with whole-cent precision (0.77), or null when that side has no order. See
 * test/fixtures/predictit/marketdata_market_7085_2021-02-26.json.
 *
 * Timestamps (`timeStamp`, `dateEnd`) carry no zone. We read them as US Eastern wall-clock time
 * (America/New_York, DST aware): PredictIt is a US venue whose site shows Eastern times, and the
 * captured fixture's `timeStamp` (12:05) only makes sense as an Eastern morning trading hour.
 * A string that does carry a zone (`Z` or `±hh:mm`) is honoured as such. `dateEnd` is "NA" when
 * the contract has no end date.
 *
 * This is low-rate REST, so it is validated with zod (STYLE.md rule 5), one contract at a time so
 * that one bad contract does not cost the whole market.
 */

/** A price in dollars, 0..1; null when the venue has no price on that side. */
const price = z.number().min(0).max(1).nullable().optional();

/** One contract of a PredictIt market: the unit we list as a market. */
export const predictItContractSchema = z.object({
  id: z.number().int().nonnegative(),
  dateEnd: z.string(),
  image: z.string().optional(),
  name: z.string().min(1),
  shortName: z.string().optional(),
  /** "Open" | "Closed" (any other value is treated as not tradable). */
  status: z.string(),
  lastTradePrice: price,
  /** Cheapest YES offer: the YES ask. */
  bestBuyYesCost: price,
  /** Cheapest NO offer: the NO ask, so YES bid = 1 − it. */
  bestBuyNoCost: price,
  /** Best YES bid (what selling YES gets). */
  bestSellYesCost: price,
  /** Best NO bid, so YES ask = 1 − it. */
  bestSellNoCost: price,
  /** Previous day's closing price. */
  lastClosePrice: price,
  displayOrder: z.number().int().optional(),
});
export type PredictItContract = z.infer<typeof predictItContractSchema>;

/** A market without its contracts, which are validated one by one. */
export const predictItMarketShellSchema = z.object({
  id: z.number().int().nonnegative(),
  name: z.string().min(1),
  shortName: z.string().optional(),
  image: z.string().optional(),
  url: z.string().optional(),
  contracts: z.array(z.unknown()),
  timeStamp: z.string().optional(),
  status: z.string(),
});
export type PredictItMarketShell = z.infer<typeof predictItMarketShellSchema>;

/** A whole market as the venue serves it (used over fixtures and by the simulator's tests). */
export const predictItMarketSchema = predictItMarketShellSchema.extend({ contracts: z.array(predictItContractSchema) });
export type PredictItMarket = z.infer<typeof predictItMarketSchema>;

/** `GET /all`. */
export const predictItAllSchema = z.object({ markets: z.array(predictItMarketSchema) });
export type PredictItAll = z.infer<typeof predictItAllSchema>;

/** The `/all` envelope with its markets still unvalidated. */
export const predictItAllShellSchema = z.object({ markets: z.array(z.unknown()) });

/** `dateEnd` when a contract has no end date. */
export const NO_DATE = 'NA';

export const EASTERN = 'America/New_York';

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/;
const ZONED = /(?:Z|[+-]\d{2}:?\d{2})$/;

const easternParts = new Intl.DateTimeFormat('en-US', {
  timeZone: EASTERN,
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** Eastern wall-clock fields of a UTC instant (whole seconds). */
function easternFields(utcMs: number): [number, number, number, number, number, number] {
  const f: Record<string, number> = {};
  for (const p of easternParts.formatToParts(new Date(utcMs))) if (p.type !== 'literal') f[p.type] = Number(p.value);
  return [f['year']!, f['month']!, f['day']!, f['hour']!, f['minute']!, f['second']!];
}

/** Offset of Eastern time from UTC at `utcMs`, in ms (−5 h or −4 h), asked of Intl. */
function easternOffsetOf(utcMs: number): number {
  const whole = Math.floor(utcMs / 1000) * 1000;
  const [y, mo, d, h, mi, s] = easternFields(whole);
  return Date.UTC(y, mo - 1, d, h, mi, s) - whole;
}

const HOUR = 3_600_000;
/** UTC hour → Eastern offset through it: every PredictIt time of a poll asked Intl twice (a twentieth of a replay's mapping). */
const offsetByHour = new Map<number, number>();

/**
 * Offset of Eastern time from UTC at `utcMs` (see `easternOffsetOf`), kept per UTC hour: New York's
 * changes of offset fall on whole UTC hours (02:00 local), so an hour whose first and last second
 * have the same offset has it throughout; an hour that does not is asked of Intl each time.
 */
function easternOffset(utcMs: number): number {
  const hour = Math.floor(utcMs / HOUR);
  let off = offsetByHour.get(hour);
  if (off === undefined) {
    const first = easternOffsetOf(hour * HOUR);
    if (first !== easternOffsetOf(hour * HOUR + HOUR - 1000)) return easternOffsetOf(utcMs);
    if (offsetByHour.size >= 4096) offsetByHour.clear();
    offsetByHour.set(hour, (off = first));
  }
  return off;
}

/**
 * Parses a PredictIt timestamp ("2021-02-26T12:05:47.33188", Eastern wall-clock time, see above)
 * to ms since epoch. NaN when it is not a timestamp (including "NA").
 */
export function parsePredictItTime(s: string): number {
  if (ZONED.test(s)) {
    const t = Date.parse(s);
    return Number.isFinite(t) ? t : NaN;
  }
  const m = LOCAL.exec(s);
  if (m === null) return NaN;
  const [y, mo, d, h, mi, sec] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59) return NaN;
  // .NET writes up to 7 fraction digits; we keep milliseconds.
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  const wall = Date.UTC(y, mo - 1, d, h, mi, sec, ms);
  // Two rounds find the offset in force at the instant itself, also across DST changes.
  let utc = wall - easternOffset(wall);
  utc = wall - easternOffset(utc);
  return utc;
}

/** Formats an instant the way PredictIt does: Eastern wall-clock time, no zone, milliseconds. */
export function formatPredictItTime(utcMs: number): string {
  const [y, mo, d, h, mi, s] = easternFields(utcMs);
  const p2 = (n: number): string => String(n).padStart(2, '0');
  const ms = String(((utcMs % 1000) + 1000) % 1000).padStart(3, '0');
  return `${y}-${p2(mo)}-${p2(d)}T${p2(h)}:${p2(mi)}:${p2(s)}.${ms}`;
}
