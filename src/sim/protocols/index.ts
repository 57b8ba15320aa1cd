import type { Protocol } from '../../config/schema.js';
import type { SimServerFactory } from '../types.js';
import { serve as kalshi } from './kalshi.js';
import { serve as polymarket } from './polymarket.js';
import { serve as polymarketUs } from './polymarket_us.js';
import { serve as predictit } from './predictit.js';
import { serve as manifold } from './manifold.js';
import { serve as exchange } from './exchange.js';

/** The simulator's server for each protocol. */
export const SIM_SERVERS: Readonly<Record<Protocol, SimServerFactory>> = {
  kalshi,
  polymarket,
  polymarket_us: polymarketUs,
  predictit,
  manifold,
  exchange,
};
