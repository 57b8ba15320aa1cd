import { awards } from './awards.js';
import type { WorldBuilder } from './builder.js';
import { crypto } from './crypto.js';
import { cpiRelease, fedMeetings } from './economics.js';
import { races } from './politics.js';
import { laterSeasons, leagues, worldCup } from './sports.js';

export { DAY, HOUR, type PropFields, type WorldBuilder } from './builder.js';

/**
 * Generates the world's events and propositions, domain by domain (SYNTHETIC DATA). The order is
 * fixed: event ids and every random draw follow it. `scale` multiplies the games and adds later
 * seasons' championships (src/sim/size.ts says how many markets a scale gives).
 */
export function generateWorld(b: WorldBuilder, scale: number): void {
  leagues(b, scale);
  worldCup(b);
  races(b);
  fedMeetings(b);
  cpiRelease(b);
  crypto(b);
  awards(b);
  laterSeasons(b, scale);
}
