import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PAYOUT } from '../../src/core/price.js';
import type { MarketStatus, MarketUpsert } from '../../src/core/types.js';
import { auditGroup, precisionOf, SettlementAudit, settlementOf, type AuditGroup } from '../../src/matching/audit.js';
import { Persistence } from '../../src/persist/store.js';
import { MarketCatalog } from '../../src/state/catalog.js';

/**
 * The settlement audit over hand-built catalogs: each test lists markets as a venue would (status,
 * result, settlement value) and groups them by hand, so what is audited is exactly what is written.
 */
const T = Date.UTC(2026, 10, 24, 12, 0, 0);
let catalog: MarketCatalog;

beforeEach(() => {
  catalog = new MarketCatalog();
});

/** A market of `venue` in the given state (result and settlement value as the venue sent them). */
function list(venue: string, id: string, status: MarketStatus, result?: string, settlementValue?: number): void {
  const ev: MarketUpsert = {
    type: 'market',
    venue,
    marketId: id,
    title: `${venue} ${id}`,
    status,
    timestamp: T,
    localTimestamp: T,
    ...(result !== undefined ? { result } : {}),
    ...(settlementValue !== undefined ? { settlementValue } : {}),
  };
  catalog.upsert(ev);
}

/** A group of catalog markets: `venue:id` keys, `~` after a key marks the member inverted. */
function group(groupId: number, keys: string[], category: string | null = 'Economics'): AuditGroup {
  return {
    groupId,
    title: `group ${groupId}`,
    category,
    members: keys.map((k) => {
      const key = k.replace(/~$/, '');
      const rec = catalog.byKey(key)!;
      return { key, venue: rec.venue, inverted: k.endsWith('~'), settlement: settlementOf(rec) };
    }),
  };
}

describe('settlementOf', () => {
  it('reads yes/no from the result or a full or zero settlement value of a determined or finalized market', () => {
    expect(settlementOf({ status: 'finalized', result: 'yes', settlementValue: PAYOUT })).toBe('yes');
    expect(settlementOf({ status: 'determined', result: 'NO' })).toBe('no');
    expect(settlementOf({ status: 'finalized', settlementValue: PAYOUT })).toBe('yes');
    expect(settlementOf({ status: 'finalized', settlementValue: 0 })).toBe('no');
  });

  it('is void for a void, cancelled or partial settlement, and undefined before one', () => {
    expect(settlementOf({ status: 'finalized', result: 'void' })).toBe('void');
    expect(settlementOf({ status: 'finalized', result: 'CANCEL' })).toBe('void');
    expect(settlementOf({ status: 'finalized', result: 'MKT', settlementValue: 6_200 })).toBe('void');
    expect(settlementOf({ status: 'determined' })).toBeUndefined();
    expect(settlementOf({ status: 'closed', result: 'yes' })).toBeUndefined();
    expect(settlementOf({ status: 'active' })).toBeUndefined();
  });
});

describe('settlement audit of hand-built groups', () => {
  it('counts an agreement when both members settled on the same side', () => {
    list('venue_a', 'A1', 'finalized', 'yes', PAYOUT);
    list('venue_b', 'B1', 'finalized', 'yes', PAYOUT);
    const audit = new SettlementAudit();
    expect(audit.check(group(1, ['venue_a:A1', 'venue_b:B1']), T)).toBeUndefined();
    expect(audit.totals()).toMatchObject({ agree: 1, contradict: 0, void: 0, pending: 0, suspectGroups: 0 });
    expect(audit.rows()).toEqual([{ category: 'Economics', venues: ['venue_a', 'venue_b'], tally: { agree: 1, contradict: 0, void: 0, pending: 0 } }]);
    expect(precisionOf(audit.totals())).toBe(1);
  });

  it('counts a contradiction and marks the group suspect, with both settlements in the reason', () => {
    list('venue_a', 'A1', 'finalized', 'yes');
    list('venue_b', 'B1', 'determined', 'no');
    const audit = new SettlementAudit(undefined, (label) => label.replace('venue_', 'v'));
    const reason = audit.check(group(7, ['venue_a:A1', 'venue_b:B1']), T);
    expect(reason).toBe('settlements contradict the match: va:A1 settled yes and vb:B1 settled no, but the group holds them as the same side');
    expect(audit.suspectOf(7)).toBe(reason);
    expect(audit.suspects()).toEqual([{ groupId: 7, title: 'group 7', category: 'Economics', venues: ['venue_a', 'venue_b'], reason }]);
    expect(audit.totals()).toMatchObject({ agree: 0, contradict: 1, suspectGroups: 1 });
    expect(precisionOf(audit.totals())).toBe(0);
  });

  it('an inverted member agrees when it settled on the other side, and contradicts on the same side', () => {
    list('venue_a', 'A1', 'finalized', 'yes');
    list('venue_b', 'B1', 'finalized', 'no');
    list('venue_a', 'A2', 'finalized', 'no');
    list('venue_c', 'C2', 'finalized', 'no');
    const audit = new SettlementAudit();
    expect(audit.check(group(1, ['venue_a:A1', 'venue_b:B1~']), T)).toBeUndefined();
    expect(audit.check(group(2, ['venue_a:A2~', 'venue_c:C2']), T)).toMatch(/as opposite sides$/);
    expect(audit.verdict('venue_b:B1', 'venue_a:A1')).toMatchObject({ opposite: true, settled: ['yes', 'no'], verdict: 'agree' });
    expect(audit.totals()).toMatchObject({ agree: 1, contradict: 1, suspectGroups: 1 });
  });

  it('keeps a pair pending while one market has settled, and judges it when the last settles', () => {
    list('venue_a', 'A1', 'finalized', 'no');
    list('venue_b', 'B1', 'closed');
    const audit = new SettlementAudit();
    audit.check(group(3, ['venue_a:A1', 'venue_b:B1']), T);
    expect(audit.tracks(3)).toBe(true);
    expect(audit.totals()).toMatchObject({ agree: 0, contradict: 0, pending: 1, pendingGroups: 1 });
    // Determined without a result yet is still pending.
    list('venue_b', 'B1', 'determined');
    audit.check(group(3, ['venue_a:A1', 'venue_b:B1']), T);
    expect(audit.totals()).toMatchObject({ agree: 0, pending: 1 });
    list('venue_b', 'B1', 'determined', 'no');
    audit.check(group(3, ['venue_a:A1', 'venue_b:B1']), T);
    expect(audit.totals()).toMatchObject({ agree: 1, contradict: 0, pending: 0, pendingGroups: 0 });
  });

  it('counts void, cancelled and partial settlements apart, never as agreements or contradictions', () => {
    list('venue_a', 'A1', 'finalized', 'void');
    list('venue_b', 'B1', 'finalized', 'yes');
    list('venue_e', 'E1', 'finalized', 'CANCEL');
    list('venue_e', 'E2', 'finalized', 'MKT', 4_000);
    list('venue_a', 'A2', 'finalized', 'no');
    const audit = new SettlementAudit();
    expect(audit.check(group(1, ['venue_a:A1', 'venue_b:B1', 'venue_e:E1']), T)).toBeUndefined();
    expect(audit.check(group(2, ['venue_e:E2', 'venue_a:A2']), T)).toBeUndefined();
    expect(audit.totals()).toMatchObject({ agree: 0, contradict: 0, void: 4, suspectGroups: 0 });
    expect(precisionOf(audit.totals())).toBeNull();
  });

  it('judges each pair of a larger group: a contradiction between two members makes the whole group suspect', () => {
    list('venue_a', 'A1', 'finalized', 'yes');
    list('venue_b', 'B1', 'finalized', 'yes');
    list('venue_c', 'C1', 'finalized', 'no');
    list('venue_h', 'H1', 'active');
    const r = auditGroup(group(4, ['venue_a:A1', 'venue_b:B1', 'venue_c:C1', 'venue_h:H1']), T);
    expect(r.judged.map((v) => [v.a, v.b, v.verdict])).toEqual([
      ['venue_a:A1', 'venue_b:B1', 'agree'],
      ['venue_a:A1', 'venue_c:C1', 'contradict'],
      ['venue_b:B1', 'venue_c:C1', 'contradict'],
    ]);
    expect(r.pending).toEqual([
      ['venue_a', 'venue_h'],
      ['venue_b', 'venue_h'],
      ['venue_c', 'venue_h'],
    ]);
    expect(r.contradiction).toMatch(/venue_a:A1 settled yes and venue_c:C1 settled no/);
  });

  it('counts a pair once however often it is audited; a corrected settlement moves it to its new verdict', () => {
    list('venue_a', 'A1', 'finalized', 'yes');
    list('venue_b', 'B1', 'determined', 'no');
    const audit = new SettlementAudit();
    for (let i = 0; i < 3; i++) audit.check(group(1, ['venue_a:A1', 'venue_b:B1']), T + i);
    expect(audit.totals()).toMatchObject({ agree: 0, contradict: 1 });
    list('venue_b', 'B1', 'finalized', 'yes');
    expect(audit.check(group(1, ['venue_a:A1', 'venue_b:B1']), T + 10)).toBeUndefined();
    expect(audit.totals()).toMatchObject({ agree: 1, contradict: 0, suspectGroups: 0 });
  });

  it('a regrouping after settlement (an operator fix) clears the suspect mark but not the counted contradiction', () => {
    list('venue_a', 'A1', 'finalized', 'yes');
    list('venue_b', 'B1', 'finalized', 'no');
    const audit = new SettlementAudit();
    expect(audit.check(group(1, ['venue_a:A1', 'venue_b:B1']), T)).toBeDefined();
    expect(audit.check(group(1, ['venue_a:A1', 'venue_b:B1~']), T)).toBeUndefined();
    expect(audit.suspectOf(1)).toBeUndefined();
    expect(audit.totals()).toMatchObject({ agree: 0, contradict: 1, suspectGroups: 0 });
    audit.drop(1);
    expect(audit.tracks(1)).toBe(false);
    expect(audit.totals()).toMatchObject({ contradict: 1 });
  });

  it('reports by category and venue pair, filtered by category (any case) and by one or two venues', () => {
    list('venue_a', 'A1', 'finalized', 'yes');
    list('venue_b', 'B1', 'finalized', 'yes');
    list('venue_a', 'A2', 'finalized', 'no');
    list('venue_c', 'C2', 'finalized', 'yes');
    list('venue_b', 'B3', 'finalized', 'no');
    list('venue_c', 'C3', 'active');
    const audit = new SettlementAudit();
    audit.check(group(1, ['venue_a:A1', 'venue_b:B1'], 'Sports'), T);
    audit.check(group(2, ['venue_c:C2', 'venue_a:A2'], 'Politics'), T);
    audit.check(group(3, ['venue_c:C3', 'venue_b:B3'], null), T);
    expect(audit.rows().map((r) => [r.category, r.venues, r.tally])).toEqual([
      [null, ['venue_b', 'venue_c'], { agree: 0, contradict: 0, void: 0, pending: 1 }],
      ['Politics', ['venue_a', 'venue_c'], { agree: 0, contradict: 1, void: 0, pending: 0 }],
      ['Sports', ['venue_a', 'venue_b'], { agree: 1, contradict: 0, void: 0, pending: 0 }],
    ]);
    expect(audit.rows({ category: 'sports' }).map((r) => r.venues)).toEqual([['venue_a', 'venue_b']]);
    expect(audit.rows({ venues: ['venue_c'] })).toHaveLength(2);
    expect(audit.rows({ venues: ['venue_c', 'venue_a'] }).map((r) => r.category)).toEqual(['Politics']);
    expect(audit.totals({ venues: ['venue_b'] })).toMatchObject({ agree: 1, contradict: 0, pending: 1, pendingGroups: 1, suspectGroups: 0 });
    expect(audit.suspects({ category: 'Politics' }).map((s) => s.groupId)).toEqual([2]);
    expect(audit.suspects({ category: 'Sports' })).toEqual([]);
  });
});

describe('settlement audit in LMDB', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cb-audit-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps its counts across a reopen of DATA_DIR, and auditing again after it counts nothing twice', async () => {
    list('venue_a', 'A1', 'finalized', 'yes');
    list('venue_b', 'B1', 'finalized', 'yes');
    list('venue_a', 'A2', 'finalized', 'yes');
    list('venue_c', 'C2', 'finalized', 'yes');
    let p = new Persistence(dir);
    const first = new SettlementAudit(p.db('audit'));
    first.check(group(1, ['venue_a:A1', 'venue_b:B1']), T);
    first.check(group(2, ['venue_a:A2', 'venue_c:C2~']), T);
    const rows = first.rows();
    await p.close();

    p = new Persistence(dir);
    const again = new SettlementAudit(p.db('audit'));
    expect(again.rows()).toEqual(rows);
    expect(again.totals()).toMatchObject({ agree: 1, contradict: 1 });
    expect(again.verdict('venue_a:A2', 'venue_c:C2')).toMatchObject({ opposite: true, verdict: 'contradict', groupId: 2, at: T });
    again.check(group(1, ['venue_a:A1', 'venue_b:B1']), T + 1);
    again.check(group(2, ['venue_a:A2', 'venue_c:C2~']), T + 1);
    expect(again.totals()).toMatchObject({ agree: 1, contradict: 1, suspectGroups: 1 });
    await p.close();
  });
});
