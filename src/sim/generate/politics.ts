import { RACES, type RaceDef } from '../data.js';
import { DAY, type WorldBuilder } from './builder.js';

/** One event per race, one proposition per candidate; the race's venue-wide ids are drawn first. */
export function races(b: WorldBuilder): void {
  for (const race of RACES) {
    const ev = b.event({
      id: b.eventId(),
      category: 'politics',
      title: `${race.year} ${race.office}`,
      startTime: Date.parse(race.closeIso) - DAY,
      closeTime: Date.parse(race.closeIso),
      futures: false,
    });
    const predictitMarket = predictitMarketName(race);
    const predictitMarketId = b.rng.digits(4);
    const manifoldContractId = b.rng.hex(20);
    const manifoldQuestion = `Who will be the ${race.year} ${race.office}?`;
    for (const [name, code, fair] of race.candidates) {
      b.prop(
        ev,
        {
          marketClass: null,
          marketType: 'election_winner',
          period: null,
          line: null,
          side: null,
          subject: name,
          statement: `${name} is ${race.office} (${race.year})`,
          fair,
        },
        {
          kind: 'race',
          code,
          name,
          extra: {
            series: race.series,
            year: race.year,
            office: race.office,
            kalshiTitle: race.kalshiTitle(name),
            kalshiEvent: race.kalshiEvent,
            polyTitle: race.polyTitle(name),
            polyEvent: race.polyEvent,
            predictitMarket,
            predictitMarketId,
            manifoldContractId,
            manifoldQuestion,
          },
        },
      );
    }
  }
}

/** PredictIt's name of the market holding a race's candidates. */
function predictitMarketName(race: RaceDef): string {
  if (/nominee/.test(race.office)) return `Who will be the ${race.year} ${race.office}?`;
  const office = race.office
    .replace('Governor of California', 'California governor race')
    .replace('President of Brazil', 'Brazilian presidential election')
    .replace(/^President$/, 'U.S. presidential election');
  return `Who will win the ${race.year} ${office}?`;
}
