import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiContext } from '../../src/api/context.js';
import { loadConfig } from '../../src/config/load.js';
import { Persistence } from '../../src/persist/store.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';

const config = loadConfig({ env: {} });
const dir = mkdtempSync(join(tmpdir(), 'cb-ctx-'));
const persistence = new Persistence(dir);
afterAll(async () => {
  await persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

const market = (venue: 'venue_a' | 'venue_b', marketId: string, title: string) =>
  ({ type: 'market', venue, marketId, title, status: 'active', timestamp: 1, localTimestamp: 1 }) as const;

describe('ApiContext market order', () => {
  it('lists keys sorted with their records index for index, current after additions and replaced records', () => {
    const state = new EngineState(config.venues);
    const ctx = new ApiContext(config, state, persistence);
    applyEvent(state, market('venue_b', 'Z', 'Zed?'));
    applyEvent(state, market('venue_a', 'M', 'Em?'));
    expect(ctx.marketKeys()).toEqual(['venue_a:M', 'venue_b:Z']);
    expect(ctx.marketRecords().map((m) => m.title)).toEqual(['Em?', 'Zed?']);
    // Changed in place: the same record object, already listed.
    applyEvent(state, { ...market('venue_a', 'M', 'Em, renamed?'), localTimestamp: 2 });
    expect(ctx.marketRecords()[0]!.title).toBe('Em, renamed?');
    // Replaced (a restore over a known market): the list takes the new object.
    state.catalog.restore({ ...state.catalog.get('venue_b', 'Z')!, title: 'Zed, restored?' });
    expect(ctx.marketRecords().map((m) => m.title)).toEqual(['Em, renamed?', 'Zed, restored?']);
    applyEvent(state, market('venue_a', 'A', 'Ay?'));
    expect(ctx.marketKeys()).toEqual(['venue_a:A', 'venue_a:M', 'venue_b:Z']);
    expect(ctx.marketRecords().map((m) => m.marketId)).toEqual(['A', 'M', 'Z']);
  });
});
