import type { Subscription } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { arbFlow } from '../../pipelines/signals.js';
import { loadConfig } from '../../src/config/load.js';
import { Turn } from '../../src/pipeline/turn.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { SignalEngine } from '../../src/signals/engine.js';
import { LifecycleTracker, type LifecycleEvent } from '../../src/signals/lifecycle/tracker.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import { bookSnapshot, eventBase } from '../support/events.js';
import { HandGroups } from '../support/groups.js';

/**
 * Arbitrage and EV under the hosted venue names (venue_b = polymarket, venue_e = exchange_e,
 * venue_h = prophetx): legs name the slug as source, link the market through the venue's URL
 * template when its record has none, and carry the names clients of the hosted API read.
 */
const config = loadConfig({ env: { CROSSBOOK_VENUE_NAMES: 'hosted' } });
const T0 = Date.UTC(2026, 10, 22, 15, 0, 0);
const H = 'prophetx_987';
const B = '0xcond-b';
const E = 'E-77';

let state: EngineState;
let engine: SignalEngine;
let events: LifecycleEvent[];
let flow: Subscription;

const at = (ms: number): void => void vi.setSystemTime(T0 + ms);
/** Flushed by hand: the events of one `apply` are one event-loop turn of the conflated arb/EV flow. */
const turn = new Turn(() => () => {});
const apply = (...evs: NormalizedEvent[]): void => {
  for (const e of evs) applyEvent(state, e);
  turn.flush();
};
const base = eventBase;
const market = (venue: string, id: string, more: Partial<{ url: string; status: 'active' | 'closed' }> = {}): NormalizedEvent => ({
  ...base(venue),
  type: 'market',
  marketId: id,
  title: `${venue} ${id}`,
  status: 'active',
  ...more,
});
const book = bookSnapshot;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  at(0);
  state = new EngineState(config.venues);
  const groups = new HandGroups();
  const tracker = new LifecycleTracker(undefined);
  engine = new SignalEngine(state, new VenueDirectory(config), groups, tracker);
  events = [];
  tracker.events$.subscribe((e) => events.push(e));
  flow = arbFlow(state, engine, turn);
  groups.groups.set(1, {
    groupId: 1,
    title: 'Seattle to win',
    eventDate: '2026-11-23',
    eventType: 'sports',
    members: [
      { venue: 'venue_h', marketId: H, inverted: false },
      { venue: 'venue_b', marketId: B, inverted: false },
      { venue: 'venue_e', marketId: E, inverted: false },
    ],
  });
  apply(market('venue_h', H), market('venue_b', B, { url: 'https://polymarket.com/event/sea/sea-win' }), market('venue_e', E));
});

afterEach(() => {
  flow.unsubscribe();
  vi.useRealTimers();
});

describe('arbitrage under the hosted names', () => {
  it('names the slug as source, links every leg, and carries the hosted field names beside ours', () => {
    // YES at 49.50 on prophetx (no fee before the game), NO at 50.00 on polymarket (its YES bid 50).
    apply(book('venue_h', H, [], [[4950, 100]]), book('venue_b', B, [[5000, 100]], []));
    const [o] = engine.get(1)!.arbs;
    expect(o).toBeDefined();
    expect(o!.legs.map((l) => [l.platform, l.source])).toEqual([
      ['prophetx', 'prophetx'],
      ['polymarket', 'polymarket'],
    ]);
    // prophetx's record has no URL: the venue template with the outcome id, as /markets shows it
    expect(o!.legs[0]).toMatchObject({ url: 'https://venue-h.example/outcome/987', source_url: 'https://venue-h.example/outcome/987' });
    expect(o!.legs[1]).toMatchObject({ source_url: 'https://polymarket.com/event/sea/sea-win' });
    expect(o).toMatchObject({
      group_id: 1,
      group_title: 'Seattle to win',
      event_date: '2026-11-23',
      event_type: 'sports',
      roi_pct: o!.roi,
      total_cost: o!.cost,
      max_wager_usd: o!.cost,
      detected_at: new Date(T0).toISOString(),
    });
    for (const l of o!.legs) {
      expect(l.fee_usd).toBe(l.fee);
      expect(l.liquidity_usd).toBeCloseTo((l.avg_price * l.size) / 100, 4);
    }
    expect(o!.total_cost).toBeCloseTo(o!.legs[0].liquidity_usd + o!.legs[1].liquidity_usd + o!.legs[0].fee_usd + o!.legs[1].fee_usd, 3);
  });

  it('keeps detected_at while the opportunity stays listed, and detects it anew after it closed', () => {
    apply(book('venue_h', H, [], [[4950, 100]]), book('venue_b', B, [[5000, 100]], []));
    at(5000);
    apply(book('venue_h', H, [], [[4950, 40]]));
    expect(engine.get(1)!.arbs[0]).toMatchObject({ size: 40, detected_at: new Date(T0).toISOString() });
    at(6000);
    apply(book('venue_h', H, [], [[5200, 40]]));
    expect(engine.get(1)!.arbs).toEqual([]);
    at(7000);
    apply(book('venue_h', H, [], [[4950, 40]]));
    expect(engine.get(1)!.arbs[0]!.detected_at).toBe(new Date(T0 + 7000).toISOString());
  });

  it('closes an opportunity for the reason its slug-named leg gives (the engine reads legs by slug)', () => {
    apply(book('venue_h', H, [], [[4950, 100]]), book('venue_b', B, [[5000, 100]], []));
    apply(market('venue_h', H, { status: 'closed' }));
    const closed = events.flatMap((e) => (e.type === 'expired' ? [e.record] : []));
    expect(closed.map((r) => [r.close_reason, r.legs.map((l) => l.source)])).toEqual([['market_closed', ['prophetx', 'polymarket']]]);
  });
});

describe('EV under the hosted names', () => {
  it('carries consensus_probability, roi_pct, ev_usd_per_dollar and a linked slug-named leg', () => {
    // polymarket and exchange_e agree near 49.5; prophetx asks 40 for YES.
    apply(book('venue_b', B, [[4900, 100]], [[5100, 100]]), book('venue_e', E, [[4800, 100]], [[5000, 100]]), book('venue_h', H, [[3800, 100]], [[4000, 100]]));
    const ev = engine.get(1)!.evs.find((e) => e.legs[0].platform === 'prophetx' && e.side === 'yes');
    expect(ev).toBeDefined();
    expect(ev).toMatchObject({
      group_title: 'Seattle to win',
      event_date: '2026-11-23',
      consensus_probability: ev!.consensus,
      roi_pct: ev!.roi,
      ev_usd_per_dollar: ev!.ev_per_dollar,
      detected_at: new Date(T0).toISOString(),
    });
    expect(ev!.consensus_probability).toBeCloseTo(0.495, 4);
    expect(ev!.ev_usd_per_dollar).toBeCloseTo(ev!.roi_pct / 100, 5);
    expect(ev!.consensus_sources).toEqual(['polymarket', 'exchange_e']);
    expect(ev!.legs[0]).toMatchObject({
      platform: 'prophetx',
      source: 'prophetx',
      market_id: H,
      side: 'yes',
      price: 40,
      roi_pct: ev!.roi,
      ev_usd_per_dollar: ev!.ev_per_dollar,
      fee_usd: ev!.fee,
      source_url: 'https://venue-h.example/outcome/987',
    });
    // exchange_e (NO at 52 against the others' 44.5) has no URL on its record either: its template with the market id
    const e = engine.get(1)!.evs.find((x) => x.legs[0].platform === 'exchange_e' && x.side === 'no');
    expect(e!.legs[0].source_url).toBe(`https://venue-e.example/markets/${E}`);
  });
});
