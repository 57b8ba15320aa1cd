import { MANIFOLD_CREATORS } from '../data.js';
import type { Rng } from '../rng.js';
import type { SimProposition } from '../types.js';
import type { ListingSpec, PropMeta } from './spec.js';
import { category, money, slugify } from './text.js';

/** Manifold phrasing: races as multi-answer markets, a few futures as binary questions. */
export function manifold(prop: SimProposition, meta: PropMeta, rng: Rng): ListingSpec | undefined {
  const e = prop.event;
  const creator = rng.pick(MANIFOLD_CREATORS);
  if (meta.kind === 'race') {
    // Multi-answer market: one listing per answer, title = the clean outcome label (spec 2.3 rule 1).
    const contractId = String(meta.extra?.['manifoldContractId']);
    const question = String(meta.extra?.['manifoldQuestion']);
    const answerId = rng.hex(12);
    return {
      id: `${contractId}:${answerId}`,
      title: meta.name!,
      eventTitle: question,
      outcome: meta.name,
      inverted: false,
      category: 'Politics',
      tags: ['Politics'],
      ids: {
        id: `${contractId}:${answerId}`,
        contract_id: contractId,
        answer_id: answerId,
        answer_text: meta.name!,
        slug: slugify(question),
        creator_username: 'Manifold',
        question,
      },
      tick: 100,
    };
  }
  let question: string | undefined;
  if (meta.kind === 'worldcup') question = `Will ${meta.name} win the 2026 FIFA World Cup?`;
  else if (meta.kind === 'crypto_max') question = `Will ${meta.name} reach $${money(prop.line!)} by the end of ${new Date(e.closeTime).getUTCFullYear() - 1}?`;
  else if (meta.kind === 'award') question = `Will ${meta.name} win ${meta.extra?.['category']} at the ${meta.extra?.['year']} ${meta.extra?.['show']}?`;
  else if (meta.kind === 'champ' && meta.league?.league === 'NFL') question = `Will the ${prop.team!.name} win the ${meta.extra?.['year']} Super Bowl?`;
  if (!question) return undefined;
  const id = rng.hex(20);
  return {
    id,
    title: question,
    eventTitle: question,
    outcome: 'Yes',
    inverted: false,
    category: category(e),
    tags: [category(e)],
    ids: { id, slug: slugify(question), creator_username: creator, question },
    tick: 100,
  };
}
