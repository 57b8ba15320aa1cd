/**
 * Integer price units. One unit is 0.0001 dollars = 0.01 cents, fine enough for Kalshi's
 * deci-cent ticks and Polymarket's 0.001 tick. A binary contract pays 1 dollar = 10_000 units.
 * Prices are parsed from the wire string without float arithmetic (STYLE.md rule 3).
 */
export const UNITS_PER_DOLLAR = 10_000;
export const UNITS_PER_CENT = 100;
/** The payout of one binary contract, in units. */
export const PAYOUT = UNITS_PER_DOLLAR;

const DECIMAL = /^(\d*)(?:\.(\d*))?$/;

/**
 * Parses a decimal dollar string ("0.4800", ".48", "1", "0.5") into units.
 * Returns NaN for anything that is not a plain non-negative decimal, has more precision than a
 * unit, or is empty. Never throws: callers on the hot path test with `Number.isNaN`.
 */
export function parseDollars(s: string): number {
  const m = DECIMAL.exec(s);
  if (m === null) return NaN;
  const int = m[1] ?? '';
  let frac = m[2] ?? '';
  if (int.length === 0 && frac.length === 0) return NaN;
  if (int.length > 6) return NaN;
  if (frac.length > 4) {
    // Extra digits are accepted only when they are zeros ("0.480000"): anything else is
    // finer than our unit and would silently round.
    if (!/^0*$/.test(frac.slice(4))) return NaN;
    frac = frac.slice(0, 4);
  }
  const i = int.length === 0 ? 0 : parseInt(int, 10);
  const f = frac.length === 0 ? 0 : parseInt(frac.padEnd(4, '0'), 10);
  return i * UNITS_PER_DOLLAR + f;
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
  if (!/^-?(\d+\.?\d*|\.\d+)$/.test(s)) return NaN;
  return roundSize(Number(s));
}

/** Rounds a size to 1e-6 contracts (the finest any venue reports). */
export function roundSize(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
