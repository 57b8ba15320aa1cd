import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Matcher, type MatcherInput, type MatcherPersistence } from '../../src/matching/matcher.js';
import type { MatchInput } from '../../src/matching/proposition/index.js';

interface Pair {
  readonly a: MatchInput;
  readonly b: MatchInput;
  readonly same: boolean;
}
const PAIRS = JSON.parse(readFileSync(new URL('../fixtures/matching/dev-pairs.json', import.meta.url), 'utf8')) as Pair[];

const keyOf = (m: MatchInput): string => `${m.platform}:${m.market_id ?? m.title}`;

/** Every distinct market of the dev set, keyed as `platform:id` (or title when the id is null). */
function devMarkets(): MatcherInput[] {
  const out = new Map<string, MatcherInput>();
  for (const p of PAIRS) for (const m of [p.a, p.b]) out.set(keyOf(m), { ...m, key: keyOf(m) });
  return [...out.values()];
}

function fed(platform: string, id: string, title: string): MatcherInput {
  return { key: `${platform}:${id}`, platform, market_id: id, title, close_time: '2026-09-16T00:00:00Z' };
}

const FED = [
  fed('kalshi', 'KXFEDDECISION-26SEP-H25', 'Will the Federal Reserve Hike rates by 25bps at their September 2026 meeting?'),
  fed('polymarket', '2252245', 'Will the Fed increase interest rates by 25 bps after the September 2026 meeting?'),
  fed('kalshi', 'KXFEDDECISION-26SEP-H0', 'Will the Federal Reserve Hike rates by 0bps at their September 2026 meeting?'),
  fed('polymarket', '2252244', 'Will there be no change in Fed interest rates after the September 2026 meeting?'),
  fed('kalshi', 'KXFEDDECISION-26SEP-C25', 'Will the Federal Reserve Cut rates by 25bps at their September 2026 meeting?'),
];

function ids(m: Matcher, keys: readonly string[]): Record<string, number | undefined> {
  return Object.fromEntries(keys.map((k) => [k, m.groupOf(k)?.group_id]));
}

class MemoryStore implements MatcherPersistence {
  readonly map = new Map<string, number>();
  saves = 0;
  load(): Iterable<[string, number]> {
    return [...this.map];
  }
  save(sig: string, id: number): void {
    this.map.set(sig, id);
    this.saves++;
  }
}

describe('Matcher grouping', () => {
  it('pooled dev markets: every labelled-same pair shares a group on one side, no labelled-different pair does', () => {
    const m = new Matcher();
    for (const x of devMarkets()) m.upsert(x);
    for (const p of PAIRS) {
      const ga = m.groupOf(keyOf(p.a))!;
      const gb = m.groupOf(keyOf(p.b))!;
      const ma = ga.members.find((x) => x.key === keyOf(p.a))!;
      const mb = gb.members.find((x) => x.key === keyOf(p.b))!;
      const sameSide = ga.group_id === gb.group_id && ma.inverted === mb.inverted;
      expect(sameSide, `${p.a.title} || ${p.b.title}`).toBe(p.same);
    }
  });

  it('describes a group per spec 2.4: no date in the title, one event_id for every group of a game', () => {
    const m = new Matcher();
    for (const x of devMarkets()) m.upsert(x);
    const ml = m.groupOf('kalshi:KXNFLGAME-26SEP09NESEA-NE')!;
    const spread = m.groupOf('kalshi:KXNFLSPREAD-26SEP09NESEA-SEA2')!;
    const { members, ...fields } = ml;
    expect(fields).toEqual({
      group_id: ml.group_id,
      title: 'New England Patriots at Seattle Seahawks: New England Patriots to win',
      market_class: 'moneyline',
      market_type: 'moneyline',
      period: 'full',
      line: null,
      side: 'away',
      player: null,
      team: 'New England Patriots',
      event_id: 'nfl-2026-09-09-ne-sea',
      event_name: 'New England Patriots at Seattle Seahawks',
      game_title: 'New England Patriots at Seattle Seahawks',
      event_date: '2026-09-09',
    });
    expect(members.map((x) => [x.platform, x.inverted, x.confidence])).toEqual([
      ['kalshi', false, 0.85],
      ['polymarket', false, 0.85],
    ]);
    expect(spread).toMatchObject({ market_class: 'spread', line: -2.5, side: 'home', team: 'Seattle Seahawks', event_id: 'nfl-2026-09-09-ne-sea' });
    expect(spread.title).toBe('New England Patriots at Seattle Seahawks: Seattle Seahawks -2.5');
  });

  it('keeps one market per venue per group, except the two sides of one game', () => {
    const m = new Matcher();
    const ne: MatcherInput = { ...PAIRS[32]!.a, key: 'k-ne' };
    m.upsert(ne);
    m.upsert({ ...ne, key: 'k-sea', market_id: 'KXNFLGAME-26SEP09NESEA-SEA', outcome: 'Seattle' });
    m.upsert({ ...PAIRS[32]!.b, key: 'p-1' });
    m.upsert({ ...PAIRS[32]!.b, key: 'p-2' }); // a second Polymarket listing of the same side
    const g = m.groupOf('k-ne')!;
    expect(g.members.map((x) => [x.key, x.inverted])).toEqual([
      ['k-ne', false],
      ['k-sea', true],
      ['p-1', false],
    ]);
    expect(m.groupOf('p-2')!.members.map((x) => x.key)).toEqual(['p-2']);
  });

  it('a listing that fits two groups equally joins neither', () => {
    const m = new Matcher();
    const sep = PAIRS[32]!.a; // KXNFLGAME-26SEP09NESEA-NE
    m.upsert({ ...sep, key: 'sep' });
    m.upsert({ ...sep, key: 'dec', market_id: 'KXNFLGAME-26DEC20NESEA-NE' });
    m.upsert({ ...PAIRS[32]!.b, key: 'undated' }); // "Patriots vs. Seahawks", no date: which game?
    expect(m.groupOf('undated')!.members).toHaveLength(1);
    m.upsert({ ...PAIRS[32]!.b, key: 'dated', close_time: '2026-12-21T01:15:00Z' }); // 8:15 pm ET, Dec 20
    expect(m.groupOf('dated')!.group_id).toBe(m.groupOf('dec')!.group_id);
  });
});

describe('one-on-one sports (tennis, MMA): competitors by surname, no team table', () => {
  const m = (platform: string, id: string, title: string, extra: Partial<MatcherInput> = {}): MatcherInput => ({
    key: `${platform}:${id}`,
    platform,
    market_id: id,
    title,
    ...extra,
  });
  const close = '2025-07-13T15:00:00Z';
  const markets: MatcherInput[] = [
    m('kalshi', 'KXATPMATCH-25JUL13SINALC-SIN', 'Will Jannik Sinner win the Sinner vs Alcaraz : Final match?', {
      event_title: 'Sinner vs Alcaraz : Final',
      outcome: 'Jannik Sinner',
    }),
    m('kalshi', 'KXATPMATCH-25JUL13SINALC-ALC', 'Will Carlos Alcaraz win the Sinner vs Alcaraz : Final match?', {
      event_title: 'Sinner vs Alcaraz : Final',
      outcome: 'Carlos Alcaraz',
    }),
    m('polymarket', 'p-sin', "Wimbledon Men's Final: Sinner vs. Alcaraz", { outcome: 'Sinner', close_time: close }),
    // another match the same day, and the same pair on another day: not the same
    m('polymarket', 'p-djo', 'Wimbledon: Djokovic vs. Alcaraz', { outcome: 'Alcaraz', close_time: close }),
    m('polymarket', 'p-old', 'Wimbledon: Sinner vs. Alcaraz', { outcome: 'Sinner', close_time: '2024-07-13T15:00:00Z' }),
    m('kalshi', 'KXUFCFIGHT-25NOV15MAKDEL-MAK', 'Will Islam Makhachev win the Makhachev vs Della Maddalena fight?', { outcome: 'Islam Makhachev' }),
    m('polymarket', 'p-ufc', 'UFC 322: Della Maddalena vs. Makhachev', { outcome: 'Makhachev', close_time: '2025-11-16T03:00:00Z' }),
    // no sport named: two surnames alone are not enough
    m('polymarket', 'p-bare', 'Sinner vs. Alcaraz', { outcome: 'Sinner', close_time: close }),
  ];
  const matcher = new Matcher();
  for (const x of markets) matcher.upsert(x);
  const g = (k: string) => matcher.groupOf(k);

  it('groups the same match across venues, each side with its YES team', () => {
    const final = g('kalshi:KXATPMATCH-25JUL13SINALC-SIN')!;
    const inv = Object.fromEntries(final.members.map((x) => [x.market_id, x.inverted]));
    expect(Object.keys(inv).sort()).toEqual(['KXATPMATCH-25JUL13SINALC-ALC', 'KXATPMATCH-25JUL13SINALC-SIN', 'p-sin']);
    // "Sinner wins" on both venues on one side, "Alcaraz wins" on the other
    expect(inv['p-sin']).toBe(inv['KXATPMATCH-25JUL13SINALC-SIN']);
    expect(inv['KXATPMATCH-25JUL13SINALC-ALC']).toBe(!inv['p-sin']);
    expect(final.title).toMatch(/^Sinner vs Alcaraz: (Sinner|Alcaraz) to win$/);
    expect(final.event_date).toBe('2025-07-13');
    const ufc = g('kalshi:KXUFCFIGHT-25NOV15MAKDEL-MAK')!;
    expect(ufc.members.map((x) => x.market_id).sort()).toEqual(['KXUFCFIGHT-25NOV15MAKDEL-MAK', 'p-ufc']);
    expect(ufc.members.every((x) => !x.inverted)).toBe(true);
  });

  it('keeps other matches, other days and sport-less titles apart', () => {
    const final = g('kalshi:KXATPMATCH-25JUL13SINALC-SIN')!.group_id;
    for (const k of ['polymarket:p-djo', 'polymarket:p-old', 'polymarket:p-bare']) expect(g(k)?.group_id ?? null, k).not.toBe(final);
  });
});

describe('Matcher incremental updates', () => {
  it('a changed title moves one market; other groups keep their ids and members', () => {
    const m = new Matcher();
    for (const x of FED) m.upsert(x);
    const keys = FED.map((x) => x.key);
    const before = ids(m, keys);
    expect(before['polymarket:2252245']).toBe(before['kalshi:KXFEDDECISION-26SEP-H25']);
    expect(before['polymarket:2252244']).toBe(before['kalshi:KXFEDDECISION-26SEP-H0']);
    const noChange = m.groupOf('kalshi:KXFEDDECISION-26SEP-H0')!;
    const comparisons = m.stats().comparisons;

    m.upsert({ ...FED[1]!, title: 'Will the Fed decrease interest rates by 25 bps after the September 2026 meeting?' });

    const after = ids(m, keys);
    expect(after['polymarket:2252245']).toBe(before['kalshi:KXFEDDECISION-26SEP-C25']);
    expect(after['kalshi:KXFEDDECISION-26SEP-H25']).toBe(before['kalshi:KXFEDDECISION-26SEP-H25']);
    expect(m.groupOf('kalshi:KXFEDDECISION-26SEP-H25')!.members.map((x) => x.key)).toEqual(['kalshi:KXFEDDECISION-26SEP-H25']);
    expect(m.groupOf('kalshi:KXFEDDECISION-26SEP-H0')).toEqual(noChange);
    // Only the blocking neighbours (one meeting's five markets) were compared again.
    expect(m.stats().comparisons - comparisons).toBeLessThanOrEqual(8);
  });

  it('an unchanged upsert is a no-op and remove() lets a waiting singleton join', () => {
    const m = new Matcher();
    const k: MatcherInput = { ...PAIRS[22]!.a, key: 'k' };
    const p1: MatcherInput = { ...PAIRS[22]!.b, key: 'p1' };
    const p2: MatcherInput = { ...PAIRS[22]!.b, key: 'p2', market_id: '558951-dup' };
    m.upsert(k);
    m.upsert(p1);
    m.upsert(p2);
    const c = m.stats().comparisons;
    m.upsert({ ...k });
    expect(m.stats().comparisons).toBe(c);
    expect(m.groupOf('p2')!.members).toHaveLength(1);
    expect(m.remove('p1')).toBe(true);
    expect(m.remove('p1')).toBe(false);
    expect(m.groupOf('p2')!.group_id).toBe(m.groupOf('k')!.group_id);
    expect(m.groupOf('p1')).toBeUndefined();
  });
});

describe('Matcher: what tells an unchanged listing', () => {
  /** The FED pair (one group), then `next` as the second listing again: whether it was read and placed again. */
  function readAgain(first: Partial<MatcherInput>, next: Partial<MatcherInput>): boolean {
    const m = new Matcher();
    m.upsert(FED[0]!);
    m.upsert({ ...FED[1]!, ...first });
    expect(m.groupOf(FED[1]!.key)!.members).toHaveLength(2);
    const c = m.stats().comparisons;
    m.upsert({ ...FED[1]!, ...next });
    return m.stats().comparisons !== c;
  }

  it('reads a listing again when any field its proposition is read from changed', () => {
    const base: Partial<MatcherInput> = { event_title: 'Fed decision in September', outcome: 'Yes', category: 'Economics', protocol: 'gamma' };
    expect(readAgain(base, { ...base })).toBe(false);
    for (const change of [
      { title: `${FED[1]!.title} ` },
      { market_id: '2252245b' },
      { event_title: 'Fed decision in September 2026' },
      { outcome: 'yes' },
      { close_time: '2026-09-17T00:00:00Z' },
      { category: 'Economy' },
      { protocol: 'clob' },
      // A value moved to the next field, or split differently between two: every field is told apart.
      { event_title: '', outcome: 'Fed decision in September' },
      { event_title: 'Fed decision in Septembe', outcome: 'rYes' },
      { category: 'Economicsgamma', protocol: '' },
    ] satisfies Partial<MatcherInput>[])
      expect(readAgain(base, { ...base, ...change }), JSON.stringify(change)).toBe(true);
  });

  it('takes an absent field for an empty one, and a close time in ms for the same text', () => {
    expect(readAgain({ outcome: undefined, category: undefined }, { outcome: '', category: '' })).toBe(false);
    expect(readAgain({ event_title: '' }, { event_title: undefined })).toBe(false);
    expect(readAgain({ close_time: 1789516800000 }, { close_time: '1789516800000' })).toBe(false);
    expect(readAgain({ close_time: 1789516800000 }, { close_time: 1789516800001 })).toBe(true);
  });
});

describe('Matcher group ids through the persistence hook', () => {
  it('gives the same propositions the same ids after a restart, whatever the arrival order', () => {
    const store = new MemoryStore();
    const markets = devMarkets();
    const first = new Matcher({ persistence: store });
    for (const x of markets) first.upsert(x);
    const want = ids(
      first,
      markets.map((x) => x.key),
    );
    const maxStored = Math.max(...store.map.values());

    const second = new Matcher({ persistence: store });
    for (const x of [...markets].reverse()) second.upsert(x);
    expect(
      ids(
        second,
        markets.map((x) => x.key),
      ),
    ).toEqual(want);

    // A proposition never seen before gets a fresh id above every stored one.
    second.upsert({ key: 'new', platform: 'polymarket', market_id: '1', title: 'Will Gavin Newsom win the 2028 Democratic presidential nomination?' });
    expect(second.groupOf('new')!.group_id).toBeGreaterThan(maxStored);
    // And the group's YES side does not depend on arrival order either.
    const side = (m: Matcher, key: string): boolean | undefined => m.groupOf(key)!.members.find((x) => x.key === key)?.inverted;
    for (const x of markets) {
      expect(second.groupOf(x.key)!.title).toBe(first.groupOf(x.key)!.title);
      expect(side(second, x.key)).toBe(side(first, x.key));
    }
  });

  it('without a hook, ids are 1, 2, 3… in order of creation', () => {
    const m = new Matcher();
    for (const x of FED) m.upsert(x);
    expect([...new Set(m.groups().map((g) => g.group_id))]).toEqual([1, 2, 3]);
  });
});
