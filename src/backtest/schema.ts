import { z } from 'zod';

/** One leg of a simulated trade: what the taker got on one market. */
export const TradeLeg = z.object({
  platform: z.string().describe('venue slug'),
  market_id: z.string().describe('native market id'),
  side: z.enum(['yes', 'no']).describe("side bought, in the market's own terms"),
  price: z.number().min(0).max(100).describe('size-weighted average price paid, cents (0 when nothing filled)'),
  limit_price: z.number().min(0).max(100).describe('worst price the order accepted (the worst level the signal walked), cents'),
  size: z.number().min(0).describe('contracts filled'),
  requested: z.number().min(0).describe('contracts the order asked for'),
  fee_usd: z.number().min(0).describe("taker fee paid, dollars (the venue's schedule, per fill)"),
  filled_at: z.string().describe('when the order hit the book: signal time + latency, ISO'),
});

/** What unwinding a broken arbitrage's excess gave. */
export const Unwind = z.object({
  leg: z.number().int().min(0).max(1).describe('index of the leg that filled more'),
  excess: z.number().min(0).describe('contracts of that leg without a matching other leg'),
  exposure_usd: z.number().describe('what the excess cost, price and fee'),
  at: z.string().nullable().describe('when it was sold back (the book at that moment); null when the window ended first'),
  sold: z.number().min(0).describe('contracts sold back'),
  proceeds_usd: z.number().describe('dollars the sale brought, before its fee'),
  fee_usd: z.number().min(0).describe('taker fee of the sale'),
  cost_usd: z.number().describe('exposure − (proceeds − fee): what breaking cost'),
});

/** One opportunity the taker acted on, at one latency. */
export const Trade = z.object({
  opportunity_id: z.string().describe('the id the opportunity carries in /arb/history and /ev/history'),
  kind: z.enum(['arb', 'ev']),
  group_id: z.number().int(),
  category: z.string().nullable(),
  signal_at: z.string().describe('when the engine opened the opportunity, ISO'),
  signal_roi: z.number().describe('net ROI percent at the signal'),
  status: z.enum(['filled', 'partial', 'broken']).describe('filled: every leg as asked; partial: fewer contracts, legs equal; broken: legs unequal'),
  net_usd: z.number().describe('arbitrage: realized ($1 per matched pair − spend − fees ± unwind); EV: expected at the consensus'),
  legs: z.array(TradeLeg).min(1).max(2),
  unwind: Unwind.nullable(),
});
export type Trade = z.infer<typeof Trade>;

export const Summary = z.object({
  opportunities: z.number().int().min(0).describe('opportunities opened in the window and evaluated at this latency'),
  fillable: z.number().int().min(0).describe('of them, those where the taker got at least one matched contract (EV: one contract)'),
  net_usd: z.number().describe('Σ net_usd of the trades'),
  broken_legs: z.number().int().min(0).describe('arbitrages whose legs filled unequally'),
  contracts: z.number().min(0).describe('contracts filled over every leg'),
  fees_usd: z.number().min(0).describe('taker fees paid, unwinds included'),
  fill_rate: z.number().min(0).max(1).describe('fillable / opportunities'),
  beyond_window: z.number().int().min(0).describe('opportunities whose fill time fell after the window: not evaluated'),
});
export type Summary = z.infer<typeof Summary>;

export const Run = z.object({
  latency_ms: z.number().int().min(0),
  summary: Summary,
  /** The line a trader reads. */
  line: z.string(),
  trades: z.array(Trade),
});

/** report.json: written by the backtest's report writer, read back by its tests against this schema. */
export const Report = z.object({
  generated_by: z.literal('crossbook backtest'),
  window: z.object({ from: z.string(), to: z.string() }),
  strategy: z.enum(['arb', 'ev']),
  max_usd: z.number().positive(),
  min_roi: z.number(),
  fees: z.enum(['venue-schedule', 'none']),
  platforms: z.array(z.string()).nullable(),
  events: z.number().int().min(0).describe('replayed events'),
  runs: z.array(Run).min(1),
});
export type Report = z.infer<typeof Report>;
