import { AWARDS } from '../data.js';
import type { WorldBuilder } from './builder.js';

/** Next year's award shows: one event per category, one proposition per nominee. */
export function awards(b: WorldBuilder): void {
  const year = new Date(b.anchor).getUTCFullYear();
  for (const [show, cat, code, nominees] of AWARDS) {
    const when = Date.UTC(year + 1, 2, 15);
    const ev = b.event({
      id: b.eventId(),
      category: 'entertainment',
      title: `${year + 1} ${show}: ${cat}`,
      startTime: when,
      closeTime: when,
      futures: false,
    });
    for (const nom of nominees) {
      b.prop(
        ev,
        {
          marketClass: null,
          marketType: 'award_winner',
          period: null,
          line: null,
          side: null,
          subject: nom,
          statement: `${nom} wins ${cat}`,
          fair: Math.round(10_000 / nominees.length),
        },
        { kind: 'award', code, name: nom, extra: { show, category: cat, year: year + 1 } },
      );
    }
  }
}
