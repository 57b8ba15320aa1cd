import { z } from 'zod';
import type { Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { errorReply, jsonReply } from '../../server/http.js';
import { documentAs } from '../../access/params.js';
import { categoryPattern, type VenueA } from './shared.js';
import { strOrNull } from '../../views/schemas.js';

/** The 200 body of /<venue_a>/series. */
export const SeriesList = z.object({
  series: z.array(
    z.object({
      ticker: z.string(),
      title: strOrNull('series title'),
      tags: z.array(z.string()),
      frequency: strOrNull('how often the series lists markets'),
      category: strOrNull('category'),
    }),
  ),
});

/** /<slug>/series: the series of a category. */
export function registerSeries(api: Api, a: VenueA): void {
  api.route({
    path: `/${a.slug}/series`,
    summary: `${a.slug} series of a category`,
    tags: [a.slug],
    query: z.object({
      category: documentAs(p.string({ required: true, max: 100, description: 'case-insensitive, same values as the markets filter' }), () => ({
        type: 'string',
        pattern: categoryPattern(a.categories()),
      })),
    }),
    response: SeriesList,
    handler: (c) => {
      const cat = a.checkCategory(c.query.category);
      if (cat && typeof cat === 'object') return errorReply(400, 'validation.invalid_category', cat.error);
      const series = [...a.seriesIndex().values()].filter((s) => s.category === cat).sort((x, y) => (x.ticker < y.ticker ? -1 : 1));
      return jsonReply({ series: series.map((s) => ({ ticker: s.ticker, title: s.title, tags: s.tags, frequency: s.frequency, category: s.category })) });
    },
  });
}
