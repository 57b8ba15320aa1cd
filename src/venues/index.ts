import type { Protocol } from '../config/schema.js';
import type { ProtocolModule } from './protocol.js';
import { protocol as kalshi } from './kalshi/index.js';
import { protocol as polymarket } from './polymarket/index.js';
import { protocol as polymarketUs } from './polymarket_us/index.js';
import { protocol as predictit } from './predictit/index.js';
import { protocol as manifold } from './manifold/index.js';
import { protocol as exchange } from './exchange/index.js';

/** Every protocol crossbook speaks, by the name the venue registry uses. */
export const PROTOCOL_MODULES: Readonly<Record<Protocol, ProtocolModule>> = {
  kalshi,
  polymarket,
  polymarket_us: polymarketUs,
  predictit,
  manifold,
  exchange,
};
