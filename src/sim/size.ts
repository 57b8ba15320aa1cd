/**
 * How many markets the simulator's world lists at a `sim.scale` (all eight default venues, SYNTHETIC).
 * Growth is linear past scale 1: about 660 listings per unit of scale (games, their propositions and
 * later seasons' championships), on top of about 415 that do not scale (races, Fed, CPI, crypto,
 * awards, the World Cup). Measured with the default seed; other seeds differ by a percent or so.
 */
const FIXED = 415;
const PER_UNIT = 659;

/** About how many markets the world lists at `scale`. */
export function marketsAtScale(scale: number): number {
  return Math.round(FIXED + PER_UNIT * Math.max(scale, 1));
}

/** A scale whose world lists at least `markets` markets (2% over the fit; 1 for the default world's size or less). */
export function scaleForMarkets(markets: number): number {
  return Math.max(1, Math.ceil(((markets - FIXED) / PER_UNIT) * 1.02));
}
