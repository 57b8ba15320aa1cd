import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMPTY, Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fanoutFlow } from '../../pipelines/fanout.js';
import { arbFlow } from '../../pipelines/signals.js';
import { KeyStore } from '../../src/access/keys.js';
import { loadPlans } from '../../src/access/plans.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { Persistence } from '../../src/persist/store.js';
import { HttpServer } from '../../src/server/http.js';
import { SignalEngine, type GroupSource, type SignalGroup } from '../../src/signals/engine.js';
import { OpportunityLog } from '../../src/signals/lifecycle/log.js';
import { LifecycleTracker } from '../../src/signals/lifecycle/tracker.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import { WsHub } from '../../src/ws/hub.js';
import { connectWs, type Msg } from '../support/ws-client.js';

const config = loadConfig({ env: {} });
const dir = mkdtempSync(join(tmpdir(), 'cb-lc-ws-'));
const group: SignalGroup = {
  groupId: 3,
  title: 'Seattle to win',
  members: [
    { venue: 'venue_h', marketId: 'H1', inverted: false },
    { venue: 'venue_b', marketId: 'B1', inverted: false },
  ],
};
const groups: GroupSource = {
  group: (id) => (id === 3 ? group : undefined),
  groupsOfMarket: (venue, id) => (group.members.some((m) => m.venue === venue && m.marketId === id) ? [3] : []),
  allGroups: () => [group],
};
let persistence: Persistence;
let http: HttpServer;
let hub: WsHub;
let state: EngineState;
let url: string;
let key: string;
const flows = new Subscription();
const apply = (...evs: NormalizedEvent[]): void => {
  for (const e of evs) applyEvent(state, e);
};
const b = (venue: string): { venue: string; timestamp: number; localTimestamp: number } => ({ venue, timestamp: Date.now(), localTimestamp: Date.now() });

beforeAll(async () => {
  persistence = new Persistence(dir);
  state = new EngineState(config.venues);
  const ks = new KeyStore(persistence.db('keys'));
  key = ks.create('dev').key;
  const engine = new SignalEngine(
    state,
    new VenueDirectory(config),
    groups,
    new LifecycleTracker(new OpportunityLog(persistence.db('opportunities'), { retentionMs: 3_600_000 })),
  );
  http = new HttpServer(log);
  hub = new WsHub({ http, path: '/api/v2/ws', state, venues: new VenueDirectory(config), keys: ks, plans: loadPlans(), log, signals: engine });
  flows.add(fanoutFlow(EMPTY, state, hub, engine));
  flows.add(arbFlow(state, engine));
  apply(
    { ...b('venue_h'), type: 'market', marketId: 'H1', title: 'Seattle', status: 'active' },
    { ...b('venue_b'), type: 'market', marketId: 'B1', title: 'Seattle', status: 'active' },
  );
  url = `ws://127.0.0.1:${await http.listen('127.0.0.1', 0)}/api/v2/ws`;
});
afterAll(async () => {
  flows.unsubscribe();
  hub.close();
  http.close();
  await persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('arb channel: opportunity ids and arb_expired', () => {
  it('sends the opportunity id with each arb, then arb_expired with the id, reason and record before the list without it', async () => {
    const c = await connectWs(url, key);
    const opportunities = (m: Msg): { opportunity_id: string }[] => m['opportunities'] as { opportunity_id: string }[];
    c.send({ type: 'subscribe', channel: 'arb' });
    await c.next((m) => m['type'] === 'subscribed');

    apply(
      { ...b('venue_h'), type: 'book_snapshot', marketId: 'H1', instrument: 'H1', bids: [], asks: [[4950, 100]] },
      { ...b('venue_b'), type: 'book_snapshot', marketId: 'B1', instrument: 'B1', bids: [[5000, 100]], asks: [] },
    );
    const arb = await c.next((m) => m['type'] === 'arb' && opportunities(m).length === 1);
    const id = opportunities(arb)[0]!.opportunity_id;
    expect(id).toMatch(/^arb_/);

    apply({ ...b('venue_h'), type: 'book_delta', marketId: 'H1', instrument: 'H1', changes: [['ask', 4950, 0]] });
    const expired = await c.next((m) => m['type'] === 'arb_expired');
    expect(expired).toMatchObject({
      channel: 'arb',
      group_id: 3,
      opportunity_id: id,
      close_reason: 'size_gone',
      record: { opportunity_id: id, kind: 'arb', platforms: ['venue_b', 'venue_h'], peak_size: 100 },
      seq: expect.any(Number),
      epoch: hub.epoch,
    });
    const i = c.all.indexOf(expired);
    await c.next((m) => m['type'] === 'arb' && opportunities(m).length === 0 && c.all.indexOf(m) > i);
    c.ws.close();
  });
});
