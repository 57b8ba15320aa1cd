import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { VenueConfig } from '../../../src/config/schema.js';
import { FeedStats } from '../../../src/venues/common/stats.js';
import { ManifoldMapper } from '../../../src/venues/manifold/mappers.js';
import { manifoldMarketListSchema, manifoldMarketSchema } from '../../../src/venues/manifold/raw.js';

const BINARY = 'test/fixtures/manifold/v0_slug_binary_markets_2024-10-31.json';
const FREE = 'test/fixtures/manifold/v0_market_free_response_docs_example.json';
const binaries = (): Record<string, unknown>[] => JSON.parse(readFileSync(BINARY, 'utf8')) as Record<string, unknown>[];
const freeResponse = (): Record<string, unknown> => JSON.parse(readFileSync(FREE, 'utf8')) as Record<string, unknown>;

const venue: VenueConfig = loadConfig({ env: {} }).venues.find((v) => v.protocol === 'manifold')!;
/** 2024-10-31T18:40Z: after both captures' last updates, before their close. */
const LOCAL = 1_730_400_000_000;
const mapper = (): ManifoldMapper => new ManifoldMapper(venue, new FeedStats());

const QUESTION = 'If Harris wins the election will the inflation rate in 2025 be below 2.5% (Current 3.5%)?';
const EXPECTED_BINARY = [
  {
    type: 'market',
    venue: 'venue_d',
    timestamp: 1730343796668,
    localTimestamp: LOCAL,
    marketId: '29jsg4n8jf',
    title: QUESTION,
    eventTitle: QUESTION,
    eventId: '29jsg4n8jf',
    closeTime: 1765349940000,
    url: 'https://manifold.markets/ManifoldPolitics/if-harris-wins-the-election-will-th',
    tags: ['us-politics', '2024-us-presidential-election', 'politics-default', 'kamala-harris', 'democratic-party'],
    extra: {
      outcomeType: 'BINARY',
      mechanism: 'cpmm-1',
      token: 'MANA',
      creatorUsername: 'ManifoldPolitics',
      slug: 'if-harris-wins-the-election-will-th',
      siblingContractId: '5qp0Qc02L9',
    },
    status: 'active',
    openTime: 1723160097217,
  },
  // probability 0.8178289933167157 → 8178 units; no book, so no bid or ask.
  {
    type: 'quote',
    venue: 'venue_d',
    timestamp: 1730343796668,
    localTimestamp: LOCAL,
    marketId: '29jsg4n8jf',
    lastPrice: 8178,
    volume: 7358.999568,
    liquidity: 1000,
  },
  {
    type: 'market',
    venue: 'venue_d',
    timestamp: 1730388734174,
    localTimestamp: LOCAL,
    marketId: '5qp0Qc02L9',
    title: QUESTION,
    eventTitle: QUESTION,
    eventId: '5qp0Qc02L9',
    closeTime: 1765349940000,
    url: 'https://manifold.markets/ManifoldPolitics/if-harris-wins-the-election-will-th--cash',
    extra: {
      outcomeType: 'BINARY',
      mechanism: 'cpmm-1',
      token: 'CASH',
      creatorUsername: 'ManifoldPolitics',
      slug: 'if-harris-wins-the-election-will-th--cash',
      siblingContractId: '29jsg4n8jf',
    },
    status: 'active',
    openTime: 1730310637391,
  },
  { type: 'quote', venue: 'venue_d', timestamp: 1730388734174, localTimestamp: LOCAL, marketId: '5qp0Qc02L9', lastPrice: 7964, volume: 4, liquidity: 100 },
];

const CID = 'lEoqtnDgJzft6apSKzYK';
const answer = (id: string, text: string, createdTime: number, lastPrice: number): unknown[] => [
  {
    type: 'market',
    venue: 'venue_d',
    timestamp: LOCAL,
    localTimestamp: LOCAL,
    marketId: `${CID}:${id}`,
    title: text,
    outcome: text,
    eventTitle: 'What is good?',
    eventId: CID,
    closeTime: 1655265001448,
    url: 'https://manifold.markets/Angela/what-is-good',
    extra: { outcomeType: 'FREE_RESPONSE', mechanism: 'dpm-2', token: 'MANA', creatorUsername: 'Angela', answerId: id },
    status: 'finalized',
    openTime: createdTime,
    result: 'MKT',
  },
  { type: 'quote', venue: 'venue_d', timestamp: LOCAL, localTimestamp: LOCAL, marketId: `${CID}:${id}`, lastPrice },
];
const EXPECTED_FREE = [
  ...answer('1', 'ANTE', 1655258941573, 6675),
  ...answer('2', 'This answer', 1655261198074, 89),
  ...answer('3', 'Toyota Camry', 1655263226587, 90),
  ...answer('4', 'Utility (Defined by your personal utility function.)', 1655264793224, 921),
];

describe('manifold wire schemas over the real fixtures', () => {
  it('accepts the captured FullMarkets and the docs FREE_RESPONSE example', () => {
    expect(manifoldMarketListSchema.safeParse(binaries()).success).toBe(true);
    expect(manifoldMarketSchema.safeParse(freeResponse()).success).toBe(true);
  });
  it('rejects a string probability and a negative volume', () => {
    expect(manifoldMarketSchema.safeParse({ ...binaries()[0], probability: '0.8' }).success).toBe(false);
    expect(manifoldMarketSchema.safeParse({ ...binaries()[0], volume: -1 }).success).toBe(false);
  });
});

describe('ManifoldMapper', () => {
  it('maps the captured BINARY markets (MANA and CASH siblings)', () => {
    const m = mapper();
    expect(m.map(binaries(), LOCAL)).toStrictEqual(EXPECTED_BINARY);
    expect(m.stats.malformedTotal).toBe(0);
  });

  it('maps a FREE_RESPONSE market to one market per answer, titled by the answer', () => {
    const m = mapper();
    expect(m.map(freeResponse(), LOCAL)).toStrictEqual(EXPECTED_FREE);
    expect(m.stats.malformedTotal).toBe(0);
  });

  it('emits only what changed on later polls', () => {
    const m = mapper();
    m.map(binaries(), LOCAL);
    expect(m.map(binaries(), LOCAL + 1)).toEqual([]);
    const moved = binaries();
    moved[1]!['probability'] = 0.81;
    moved[1]!['lastUpdatedTime'] = 1730388800000;
    expect(m.map(moved, LOCAL + 2)).toStrictEqual([
      {
        type: 'quote',
        venue: 'venue_d',
        timestamp: 1730388800000,
        localTimestamp: LOCAL + 2,
        marketId: '5qp0Qc02L9',
        lastPrice: 8100,
        volume: 4,
        liquidity: 100,
      },
    ]);
    // Past its close time the market reads closed, with no new quote.
    const late = m.map(moved, 1765349940000);
    expect(late.map((e) => [e.type, 'status' in e ? e.status : undefined])).toEqual([
      ['market', 'closed'],
      ['market', 'closed'],
    ]);
  });

  it('settles resolved BINARY markets', () => {
    const res = (resolution: string, extra: Record<string, unknown> = {}): unknown =>
      mapper().map({ ...binaries()[0], isResolved: true, resolution, ...extra }, LOCAL)[0];
    expect(res('YES')).toMatchObject({ status: 'finalized', result: 'yes', settlementValue: 10_000 });
    expect(res('NO')).toMatchObject({ status: 'finalized', result: 'no', settlementValue: 0 });
    expect(res('MKT', { resolutionProbability: 0.3 })).toMatchObject({ status: 'finalized', result: 'MKT', settlementValue: 3000 });
    expect(res('CANCEL')).toMatchObject({ status: 'finalized', result: 'CANCEL' });
    expect(res('CANCEL')).not.toHaveProperty('settlementValue');
  });

  it('settles multi-answer markets per answer', () => {
    const one = { ...freeResponse(), resolution: '3' };
    const byAnswer = mapper()
      .map(one, LOCAL)
      .filter((e) => e.type === 'market')
      .map((e) => [e.marketId, 'result' in e ? e.result : undefined]);
    expect(byAnswer).toEqual([
      [`${CID}:1`, 'no'],
      [`${CID}:2`, 'no'],
      [`${CID}:3`, 'yes'],
      [`${CID}:4`, 'no'],
    ]);
    const cpmm: Record<string, unknown> = {
      ...freeResponse(),
      isResolved: false,
      resolution: undefined,
      outcomeType: 'MULTIPLE_CHOICE',
      mechanism: 'cpmm-multi-1',
    };
    (cpmm['answers'] as Record<string, unknown>[])[1]!['resolution'] = 'NO';
    const out = mapper()
      .map(cpmm, 1655260000000)
      .filter((e) => e.type === 'market');
    expect(out.map((e) => (e.type === 'market' ? [e.status, e.result] : []))).toEqual([
      ['active', undefined],
      ['finalized', 'no'],
      ['active', undefined],
      ['active', undefined],
    ]);
  });

  it('counts and drops bad markets and answers, ignores what it does not list', () => {
    const m = mapper();
    const [good] = binaries();
    const badAnswer = freeResponse();
    (badAnswer['answers'] as Record<string, unknown>[])[0]!['probability'] = null;
    const out = m.map(
      [
        { ...good, probability: '0.8' }, // wrong type
        { ...good, id: 'b', probability: 1.2 }, // out of range
        { ...good, id: 'c', volume: -5 }, // negative
        { ...good, id: 'd', probability: undefined }, // BINARY without a price
        42,
        null,
        '[{"id":"29jsg4n8jf","probab', // truncated text
        badAnswer,
        { ...good, id: 'e', outcomeType: 'PSEUDO_NUMERIC' },
        { ...good, id: 'f', outcomeType: 'MULTIPLE_CHOICE' }, // a LiteMarket: answers come from the FullMarket
        { ...good, id: 'g', outcomeType: 'SOMETHING_NEW' },
      ],
      LOCAL,
    );
    expect(out.map((e) => ('marketId' in e ? e.marketId : e.type))).toEqual([`${CID}:2`, `${CID}:2`, `${CID}:3`, `${CID}:3`, `${CID}:4`, `${CID}:4`]);
    expect(Object.fromEntries(m.stats.malformed)).toEqual({ market: 7, answer: 1 });
    expect(m.stats.ignored).toBe(2);
    expect(Object.fromEntries(m.stats.unknown)).toEqual({ 'outcomeType:SOMETHING_NEW': 1 });
  });

  it('re-emits everything after reset()', () => {
    const m = mapper();
    m.map(binaries(), LOCAL);
    m.reset();
    expect(m.map(binaries(), LOCAL)).toStrictEqual(EXPECTED_BINARY);
  });
});
