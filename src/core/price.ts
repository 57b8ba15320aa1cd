/**
 * Integer price units. One unit is 0.0001 dollars = 0.01 cents, fine enough for Kalshi's
 * deci-cent ticks and Polymarket's 0.001 tick. A binary contract pays 1 dollar = 10_000 units.
 * Prices are parsed from the wire string without float arithmetic (STYLE.md rule 3).
 */
export const UNITS_PER_DOLLAR = 10_000;
export const UNITS_PER_CENT = 100;
/** The payout of one binary contract, in units. */
export const PAYOUT = UNITS_PER_DOLLAR;

/**
 * Parses a decimal dollar string ("0.4800", ".48", "1", "0.5") into units.
 * Returns NaN for anything that is not a plain non-negative decimal, has more precision than a
 * unit, or is empty. Never throws: callers on the hot path test with `Number.isNaN`.
 * A character loop, not a regex: it runs for every level of every book frame.
 */
export function parseDollars(s: string): number {
  return parseDollarsAt(s, 0, s.length);
}

/** `parseDollars` of `s.slice(start, end)`, without the slice (frames scanned in place). */
export function parseDollarsAt(s: string, start: number, end: number): number {
  const n = end;
  let i = start;
  let int = 0;
  let intDigits = 0;
  for (; i < n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) break;
    if (++intDigits > 6) return NaN;
    int = int * 10 + c;
  }
  let frac = 0;
  let fracDigits = 0;
  if (i < n) {
    if (s.charCodeAt(i) !== 46 /* . */) return NaN;
    for (i++; i < n; i++) {
      const c = s.charCodeAt(i) - 48;
      if (c < 0 || c > 9) return NaN;
      // Digits past the fourth are accepted only when they are zeros ("0.480000"): anything
      // else is finer than our unit and would silently round.
      if (fracDigits >= 4) {
        if (c !== 0) return NaN;
        fracDigits++;
        continue;
      }
      frac = frac * 10 + c;
      fracDigits++;
    }
  }
  if (intDigits === 0 && fracDigits === 0) return NaN;
  for (let k = Math.min(fracDigits, 4); k < 4; k++) frac *= 10;
  return int * UNITS_PER_DOLLAR + frac;
}

/** Parses a dollar price that must lie inside a binary contract's range [0, 1]. */
export function parseProbabilityDollars(s: string): number {
  const u = parseDollars(s);
  return u >= 0 && u <= PAYOUT ? u : NaN;
}

/** Integer cents (legacy Kalshi fields, 0..100) to units. NaN when not an integer in range. */
export function unitsFromIntCents(c: unknown): number {
  return typeof c === 'number' && Number.isInteger(c) && c >= 0 && c <= 100 ? c * UNITS_PER_CENT : NaN;
}

/**
 * A float probability (0..1) such as Manifold's `probability` or PredictIt's dollar numbers,
 * rounded to the nearest unit. Only for venues that publish floats; NaN when outside [0, 1].
 */
export function unitsFromProbability(p: unknown): number {
  if (typeof p !== 'number' || !Number.isFinite(p) || p < 0 || p > 1) return NaN;
  return Math.round(p * UNITS_PER_DOLLAR);
}

/** Units to the API's cents (0..100) as a number, e.g. 4810 → 48.1. */
export function toCents(units: number): number {
  return units / UNITS_PER_CENT;
}

/** Units to a Kalshi-style 4-decimal dollar string, e.g. 4810 → "0.4810". */
export function toDollarString(units: number): string {
  const neg = units < 0;
  const a = Math.abs(Math.round(units));
  const s = `${Math.floor(a / UNITS_PER_DOLLAR)}.${String(a % UNITS_PER_DOLLAR).padStart(4, '0')}`;
  return neg ? `-${s}` : s;
}

/** The price of the complementary side: YES ask = 100 − best NO bid (spec 2.1). */
export function complement(units: number): number {
  return PAYOUT - units;
}

/**
 * Parses a size/count string ("300.00", "-54.00", "1234.5") into a number of contracts.
 * Sizes are not prices: fractional contracts exist, and sizes are kept as numbers rounded to
 * 1e-6 so that relative deltas do not drift.
 */
export function parseSize(s: string): number {
  // Validate with a character loop (the hot path), then let Number do the conversion.
  const n = s.length;
  let i = s.charCodeAt(0) === 45 /* - */ ? 1 : 0;
  let digits = 0;
  let dot = false;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (dot) return NaN;
      dot = true;
    } else if (c >= 48 && c <= 57) digits++;
    else return NaN;
  }
  if (digits === 0) return NaN;
  return roundSize(Number(s));
}

/**
 * `parseSize` of `s.slice(start, end)`. Up to six decimals and fifteen digits it counts exact
 * millionths, which is what `roundSize(Number(…))` gives too, without the slice; longer strings
 * go through `parseSize`.
 */
export function parseSizeAt(s: string, start: number, end: number): number {
  const neg = s.charCodeAt(start) === 45; /* - */
  let i = neg ? start + 1 : start;
  let units = 0;
  let digits = 0;
  let frac = -1;
  for (; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c === 46 /* . */) {
      if (frac >= 0) return NaN;
      frac = 0;
    } else if (c >= 48 && c <= 57) {
      if (frac >= 0) frac++;
      digits++;
      units = units * 10 + (c - 48);
    } else return NaN;
  }
  if (digits === 0) return NaN;
  const scale = frac < 0 ? 6 : 6 - frac;
  if (scale < 0 || digits + scale > 15) return parseSize(s.slice(start, end));
  for (let k = 0; k < scale; k++) units *= 10;
  const v = units / 1e6;
  return neg ? -v : v;
}

/** Rounds a size to 1e-6 contracts (the finest any venue reports). */
export function roundSize(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
