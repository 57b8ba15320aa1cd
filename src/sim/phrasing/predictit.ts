import type { Rng } from '../rng.js';
import type { SimProposition } from '../types.js';
import type { ListingSpec, PropMeta } from './spec.js';

/** PredictIt phrasing: races only, one contract per candidate in the race's market. */
export function predictit(_prop: SimProposition, meta: PropMeta, rng: Rng): ListingSpec | undefined {
  if (meta.kind !== 'race') return undefined;
  const market = String(meta.extra?.['predictitMarket']);
  const marketId = String(meta.extra?.['predictitMarketId']);
  const contractId = rng.digits(5);
  return {
    id: contractId,
    title: meta.name!,
    eventTitle: market,
    outcome: meta.name,
    inverted: false,
    category: 'Politics',
    tags: ['Politics'],
    ids: { market_id: marketId, contract_id: contractId, market_name: market, contract_name: meta.name!, short_name: meta.name!.split(' ').slice(-1)[0]! },
    tick: 100,
  };
}
