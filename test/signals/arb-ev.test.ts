import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { Level } from '../../src/core/types.js';
import { bestArb, groupArbs, ladders, sortByRoi, type GroupMember } from '../../src/signals/arb.js';
import { consensus, groupEv } from '../../src/signals/ev.js';

const venues = Object.fromEntries(loadConfig({ env: {} }).venues.map((v) => [v.label, v]));
const member = (label: string, inverted = false): GroupMember => ({ venue: venues[label]!, marketId: `${label}-M`, inverted, fee: {} });
const c = (cents: number, size: number): Level => [cents * 100, size];

describe('arbitrage (hand-computed)', () => {
  it('buys YES on venue_a and NO on venue_b, net of the Kalshi fee, at the depth that still pays', () => {
    const a = ladders(member('venue_a'), [c(38, 100)], [c(40, 100)]);
    const b = ladders(member('venue_b'), [c(55, 50), c(52, 100)], [c(57, 10)]);
    const o = bestArb(1, a, b)!;
    // 50 @ (40 + 45) + 50 @ (40 + 48); Kalshi fee per fill ceil(0.07 × 50 × 0.4 × 0.6 = 0.84) = 0.84 twice
    expect(o.size).toBe(100);
    expect(o.cost).toBeCloseTo(40 + 22.5 + 24 + 1.68, 10);
    expect(o.payout).toBe(100);
    expect(o.profit).toBeCloseTo(11.82, 10);
    expect(o.roi).toBeCloseTo((11.82 / 88.18) * 100, 3);
    expect(o.legs[0]).toMatchObject({ platform: 'venue_a', source: 'venue_a', side: 'yes', price: 40, size: 100, fee: 1.68 });
    expect(o.legs[1]).toMatchObject({ platform: 'venue_b', side: 'no', price: 45, avg_price: 46.5, fee: 0 });
  });

  it('stops before contracts that lose money after fees', () => {
    // 49 + 50 = 99 cents, and the Kalshi fee on 1 contract at 49c is 2 cents: no arbitrage
    const a = ladders(member('venue_a'), [], [c(49, 1)]);
    const b = ladders(member('venue_b'), [c(50, 1)], []);
    expect(bestArb(1, a, b)).toBeUndefined();
    // without fees (venue_b both legs would be the same venue, so use venue_e at 0.02 × P(1−P))
    const e = ladders(member('venue_e'), [], [c(49, 10)]);
    const o = bestArb(1, e, b)!;
    expect(o.size).toBe(1);
    expect(o.profit).toBeCloseTo(0.01 - 0.02 * 0.49 * 0.51, 4); // reported to 1/100 of a cent
  });

  it('handles an inverted member: its YES is the group NO', () => {
    // venue_e lists the complement: its YES ask 58 is the group's NO at 58; its YES bid 55 is a group-YES ask of 45
    const inv = ladders(member('venue_e', true), [c(55, 10)], [c(58, 10)]);
    expect(inv.yesAsks).toEqual([c(45, 10)]);
    expect(inv.noAsks).toEqual([c(58, 10)]);
    const b = ladders(member('venue_b'), [c(50, 10)], [c(51, 10)]);
    const all = groupArbs(7, [inv, b]);
    // group YES on venue_e (45, via its NO) + group NO on venue_b (50): 95 + fee
    expect(all[0]!.legs[0]).toMatchObject({ platform: 'venue_e', side: 'no', price: 45 });
    expect(all[0]!.legs[1]).toMatchObject({ platform: 'venue_b', side: 'no', price: 50 });
    expect(all[0]!.group_id).toBe(7);
  });

  it('never pairs two markets of the same venue', () => {
    const a1 = ladders(member('venue_a'), [c(60, 10)], [c(30, 10)]);
    const a2 = ladders({ ...member('venue_a'), marketId: 'other' }, [c(60, 10)], [c(30, 10)]);
    expect(groupArbs(1, [a1, a2])).toEqual([]);
  });
});

describe('EV against the leave-one-out consensus', () => {
  it('prices an outlier venue against the depth-weighted mid of the others', () => {
    const a = ladders(member('venue_a'), [c(48, 100)], [c(50, 100)]);
    const b = ladders(member('venue_b'), [c(49, 100)], [c(51, 100)]);
    const e = ladders(member('venue_e'), [c(58, 100)], [c(60, 100)]);
    expect(consensus([a, b, e], 'venue_e')!.probability).toBeCloseTo(0.495, 10);
    // one other venue is not a consensus
    expect(consensus([a, e], 'venue_e')).toBeUndefined();
    const evs = groupEv(3, [a, b, e]).filter((x) => x.legs[0].platform === 'venue_e');
    const no = evs.find((x) => x.side === 'no')!;
    // NO at 42 + fee 0.02 × 0.42 × 0.58 = 0.004872; p(NO) = 0.505
    const cost = 0.42 + 0.004872;
    expect(no.roi).toBeCloseTo(((0.505 - cost) / cost) * 100, 3);
    expect(no.ev_per_dollar).toBeCloseTo(no.roi / 100, 5);
    expect(evs.find((x) => x.side === 'yes')).toBeUndefined();
  });

  it('ignores quotes wider than 20 cents in the consensus', () => {
    const wide = ladders(member('venue_a'), [c(20, 100)], [c(80, 100)]);
    expect(consensus([wide])).toBeUndefined();
  });
});

describe('sortByRoi', () => {
  it('orders as a stable Array.sort by ROI, best first, at every length around its cut-over', () => {
    let seed = 5;
    const draw = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    for (let n = 0; n <= 40; n++)
      for (let round = 0; round < 20; round++) {
        // Few distinct ROIs, so equal ones test the order they keep.
        const list = Array.from({ length: n }, (_, i) => ({ roi: Math.floor(draw() * 5) - 2, i }));
        const want = [...list].sort((a, b) => b.roi - a.roi);
        expect(sortByRoi(list)).toEqual(want);
      }
  });
});
