/**
 * How many markets the service's `/markets` reports at a `sim.scale` once every venue is live (the
 * eight default venues, SYNTHETIC). The world lists about 660 listings per unit of scale (games,
 * their propositions, later seasons' championships) on top of about 415 that do not scale (races,
 * Fed, CPI, crypto, awards, the World Cup); `/markets` shows a little fewer (listings that open
 * later, and venues whose one market holds several listings): 911 at scale 1, 101,362 at 155.
 */
const FIXED = 259;
const PER_UNIT = 652;

/** About how many markets `/markets` reports at `scale`. */
export function marketsAtScale(scale: number): number {
  return Math.round(FIXED + PER_UNIT * Math.max(scale, 1));
}

/** A scale at which `/markets` reports at least `markets` markets (8% over the fit: the count varies with the time of day, as listings open; 1 for the default world's size or less). */
export function scaleForMarkets(markets: number): number {
  return Math.max(1, Math.ceil(((markets - FIXED) / PER_UNIT) * 1.08));
}
