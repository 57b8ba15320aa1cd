import { z } from 'zod';
import type { Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { errorReply, jsonReply } from '../../server/http.js';
import type { VenueA } from './shared.js';

/** /<slug>/series: the series of a category. */
export function registerSeries(api: Api, a: VenueA): void {
  api.route({
    path: `/${a.slug}/series`,
    summary: `${a.slug} series of a category`,
    tags: [a.slug],
    query: z.object({ category: p.string({ required: true, max: 100, description: 'case-insensitive, same values as the markets filter' }) }),
    handler: (c) => {
      const cat = a.checkCategory(c.query.category);
      if (cat && typeof cat === 'object') return errorReply(400, 'validation.invalid_category', cat.error);
      const series = [...a.seriesIndex().values()].filter((s) => s.category === cat).sort((x, y) => (x.ticker < y.ticker ? -1 : 1));
      return jsonReply({ series: series.map((s) => ({ ticker: s.ticker, title: s.title, tags: s.tags, frequency: s.frequency, category: s.category })) });
    },
  });
}
