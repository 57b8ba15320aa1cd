import type { FeeSchedule, VenueConfig } from '../config/schema.js';
import type { Clock } from '../core/clock.js';
import { PAYOUT } from '../core/price.js';
import type { Level } from '../core/types.js';
import type { FeeContext } from '../signals/fees.js';
import { feeContext } from '../signals/engine.js';
import type { LifecycleEvent } from '../signals/lifecycle/tracker.js';
import type { EngineState } from '../state/engine.js';
import { sideLevels } from '../state/books.js';
import type { VenueDirectory } from '../venues/directory.js';
import { arbNet, buyLadder, evNet, matchLegs, planOrders, sellLadder, walkBuy, walkSell, type LegOrder, type MarketLadder, type Walk } from './fill.js';
import type { Trade } from './schema.js';

/** What the taker acts on and how. */
export interface TakerOptions {
  readonly latencies: readonly number[];
  readonly strategy: 'arb' | 'ev';
  /** Dollars the taker puts on one opportunity at most. */
  readonly maxUsd: number;
  /** Opportunities opening below this net ROI percent are skipped. */
  readonly minRoi: number;
  /** Only opportunities whose every leg is on one of these venues (slugs); undefined: all. */
  readonly platforms?: ReadonlySet<string> | undefined;
  /** Fees as each venue's schedule says, or none (to see the edge before fees). */
  readonly fees: 'venue-schedule' | 'none';
  /** Opportunities opened before this (ms) only warm the books up and are not traded. */
  readonly from: number;
  /** Act on this opportunity id only (GET /arb/history/:id/fills); undefined: on every one. */
  readonly only?: string | undefined;
}

/** Where the taker's results go, one call per opportunity and latency (the report, src/backtest/report.ts). */
export interface TradeSink {
  /** `trade` undefined: nothing filled. */
  result(latencyMs: number, trade: Trade | undefined): void;
}

/** One leg as planned at signal time. */
interface PlannedLeg {
  readonly venue: VenueConfig;
  readonly marketId: string;
  readonly side: 'yes' | 'no';
  readonly order: LegOrder;
}

/** An opportunity as the taker saw it at its signal. */
interface Plan {
  readonly id: string;
  readonly kind: 'arb' | 'ev';
  readonly groupId: number;
  readonly category: string | null;
  readonly at: number;
  readonly roi: number;
  /** EV: the consensus probability of the side bought. */
  readonly probability: number;
  readonly legs: readonly PlannedLeg[];
}

const NONE: FeeSchedule = { kind: 'none', note: '' };
const iso = (ms: number): string => new Date(ms).toISOString();
const usd = (units: number): number => Math.round((units / PAYOUT) * 1e4) / 1e4;
const cents = (units: number): number => Math.round(units) / 100;

/**
 * The simulated taker, inside a replay: on each opportunity the lifecycle opens it fixes its orders
 * from the books of that moment (signal time), then for each latency sets a timer on the replay's
 * clock and, when it fires, walks the books as they stand then (signal time + latency) — never a
 * later book, since the replay has not applied one yet. An arbitrage whose legs filled unequally
 * sells its excess back another `latency` later (at least 1 ms: the next book), against the book of
 * that moment. Nothing is kept but the timers in flight.
 */
export class Taker {
  private readonly inFlight = new Set<() => void>();
  /** Fills and unwinds set but not yet due when the window ended, per latency. */
  readonly beyondWindow = new Map<number, number>();
  private readonly pendingUnwinds = new Map<string, { latency: number; finish: (sale: undefined) => void }>();

  constructor(
    private readonly clock: Clock,
    private readonly state: EngineState,
    private readonly venues: VenueDirectory,
    private readonly sink: TradeSink,
    private readonly opts: TakerOptions,
    private readonly categoryOf: (groupId: number) => string | null,
  ) {}

  /** Hand every lifecycle event here. */
  onEvent(e: LifecycleEvent): void {
    if (e.type !== 'opened' || e.kind !== this.opts.strategy) return;
    const now = this.clock.now();
    if (now < this.opts.from || e.opportunity.roi < this.opts.minRoi) return;
    if (this.opts.only !== undefined && e.id !== this.opts.only) return;
    const plan = this.plan(e, now);
    if (!plan) return;
    for (const lat of this.opts.latencies) this.schedule(lat, () => this.fill(plan, lat));
  }

  /** The window ended: fills and unwinds not yet due are counted, broken arbs not yet unwound are reported unsold. */
  finish(): void {
    for (const cancel of this.inFlight) cancel();
    this.inFlight.clear();
    for (const u of this.pendingUnwinds.values()) u.finish(undefined);
    this.pendingUnwinds.clear();
  }

  private schedule(ms: number, fn: () => void, unwind = false): void {
    const lat = ms;
    const cancel = this.clock.after(ms, () => {
      this.inFlight.delete(counted);
      fn();
    });
    const counted = (): void => {
      cancel();
      if (!unwind) this.beyondWindow.set(lat, (this.beyondWindow.get(lat) ?? 0) + 1);
    };
    this.inFlight.add(counted);
  }

  private plan(e: Extract<LifecycleEvent, { type: 'opened' }>, now: number): Plan | undefined {
    const o = e.opportunity;
    const legs = o.legs.map((l) => ({ l, venue: this.venues.bySlug.get(l.source) }));
    if (legs.some((x) => x.venue === undefined)) return undefined;
    if (this.opts.platforms && legs.some((x) => !this.opts.platforms!.has(x.l.platform))) return undefined;
    const signal = legs.map(({ l, venue }) => {
      const v = venue!;
      return { venue: v, marketId: l.market_id, side: l.side, asks: buyLadder(this.book(v, l.market_id), l.side), ...this.fees(v, l.market_id) };
    });
    const orders = planOrders(signal, o.size, this.opts.maxUsd * PAYOUT);
    const probability = e.kind === 'ev' ? (e.opportunity.side === 'yes' ? e.opportunity.consensus : 1 - e.opportunity.consensus) : 1;
    return {
      id: e.id,
      kind: e.kind,
      groupId: o.group_id,
      category: this.categoryOf(o.group_id),
      at: now,
      roi: o.roi,
      probability,
      legs: signal.map((s, i) => ({ venue: s.venue, marketId: s.marketId, side: s.side, order: orders[i]! })),
    };
  }

  private fees(v: VenueConfig, marketId: string): { fees: FeeSchedule; fee: FeeContext } {
    return { fees: this.opts.fees === 'none' ? NONE : v.fees, fee: feeContext(this.state.catalog.get(v.label, marketId)?.extra) };
  }

  /**
   * A market's book now, in its own YES terms: its ready L2 book, else (venues without books) its
   * quoted top of book with the quoted size, as the signal engine reads it; empty when neither.
   * Each side's levels are copied when first read: a leg walks one side (a whole book copied per
   * fill was most of the taker's time).
   */
  private book(v: VenueConfig, marketId: string): MarketLadder {
    const s = this.state.books.marketSides(v.label, marketId);
    if (!s) {
      const q = this.state.quotes.get(v.label, marketId);
      return {
        bids: q?.yesBid !== undefined ? [[q.yesBid, q.yesBidSize ?? 0]] : [],
        asks: q?.yesAsk !== undefined ? [[q.yesAsk, q.yesAskSize ?? 0]] : [],
      };
    }
    return {
      get bids(): Level[] {
        return sideLevels(s.bids, Infinity, s.complement);
      },
      get asks(): Level[] {
        return sideLevels(s.asks, Infinity, s.complement);
      },
    };
  }

  private fill(plan: Plan, latency: number): void {
    const now = this.clock.now();
    const walks = plan.legs.map((l) => walkBuy(buyLadder(this.book(l.venue, l.marketId), l.side), l.order));
    if (plan.kind === 'ev') {
      const w = walks[0]!;
      if (w.contracts <= 0) return this.sink.result(latency, undefined);
      return this.sink.result(latency, this.trade(plan, walks, now, evNet(w, plan.probability), null));
    }
    const [a, b] = walks as [Walk, Walk];
    const m = matchLegs(a, b);
    if (a.contracts <= 0 && b.contracts <= 0) return this.sink.result(latency, undefined);
    if (m.excessLeg === undefined) return this.sink.result(latency, this.trade(plan, walks, now, arbNet(a, b, undefined), null));
    // Broken: sell the excess back at the book of the unwind moment.
    const leg = plan.legs[m.excessLeg]!;
    const key = `${plan.id}@${latency}`;
    const finish = (sale: ReturnType<typeof walkSell> | undefined): void => {
      this.pendingUnwinds.delete(key);
      const soldAt = sale ? this.clock.now() : undefined;
      const net = arbNet(a, b, sale);
      const unwind = {
        leg: m.excessLeg!,
        excess: m.excess,
        exposure_usd: usd(m.exposure),
        at: soldAt === undefined ? null : iso(soldAt),
        sold: sale?.contracts ?? 0,
        proceeds_usd: usd(sale?.proceeds ?? 0),
        fee_usd: usd(sale?.fee ?? 0),
        cost_usd: usd(m.exposure - (sale ? sale.proceeds - sale.fee : 0)),
      };
      this.sink.result(latency, this.trade(plan, walks, now, net, unwind));
    };
    this.pendingUnwinds.set(key, { latency, finish });
    this.schedule(
      Math.max(1, latency),
      () => finish(walkSell(sellLadder(this.book(leg.venue, leg.marketId), leg.side), m.excess, leg.order.fees, this.fees(leg.venue, leg.marketId).fee)),
      true,
    );
  }

  private trade(plan: Plan, walks: readonly Walk[], at: number, net: number, unwind: Trade['unwind']): Trade {
    const legs = plan.legs.map((l, i) => {
      const w = walks[i]!;
      return {
        platform: l.venue.slug,
        market_id: l.marketId,
        side: l.side,
        price: w.contracts > 0 ? Math.round(w.spent / w.contracts) / 100 : 0,
        limit_price: cents(l.order.limit),
        size: w.contracts,
        requested: l.order.contracts,
        fee_usd: usd(w.fee),
        filled_at: iso(at),
      };
    });
    const full = walks.every((w, i) => w.contracts >= plan.legs[i]!.order.contracts - 1e-9);
    return {
      opportunity_id: plan.id,
      kind: plan.kind,
      group_id: plan.groupId,
      category: plan.category,
      signal_at: iso(plan.at),
      signal_roi: plan.roi,
      status: unwind ? 'broken' : full ? 'filled' : 'partial',
      net_usd: usd(net),
      legs,
      unwind,
    };
  }
}
