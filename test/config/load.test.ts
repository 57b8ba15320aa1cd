import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp.js';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';

describe('loadConfig', () => {
  it('loads the registry with the spec labels as default slugs', () => {
    const c = loadConfig({ env: {} });
    expect(c.venues.map((v) => v.slug)).toEqual(['venue_a', 'venue_b', 'venue_c', 'venue_d', 'venue_e', 'venue_f', 'venue_g', 'venue_h']);
    expect(c.venues.find((v) => v.label === 'venue_a')!.protocol).toBe('kalshi');
    expect(c.venues.filter((v) => v.capabilities.yesOnlyBook).map((v) => v.label)).toEqual(['venue_f', 'venue_g', 'venue_h']);
    expect(c.server.port).toBe(8080);
  });

  it('applies environment overrides, friendly and generic', () => {
    const c = loadConfig({ env: { PORT: '9999', DATA_DIR: '/tmp/x', CROSSBOOK__sim__seed: '7', CROSSBOOK_VENUE__venue_a__slug: 'kalshi' } });
    expect(c.server.port).toBe(9999);
    expect(c.dataDir).toBe('/tmp/x');
    expect(c.sim.seed).toBe(7);
    expect(c.venues[0]!.slug).toBe('kalshi');
  });

  it('names the bad key in a clear error', () => {
    expect(() => loadConfig({ env: { PORT: 'eighty' } })).toThrow(/server\.port/);
    expect(() => loadConfig({ env: { CROSSBOOK_VENUE__venue_b__slug: 'Bad Slug!' } })).toThrow(/venues\.1\.slug/);
    expect(() => loadConfig({ env: { CROSSBOOK_VENUE__venue_b__slug: 'venue_a' } })).toThrow(/duplicate slug venue_a/);
    expect(() => loadConfig({ env: { CROSSBOOK_VENUE__venue_z__slug: 'z' } })).toThrow(/venue_z: unknown venue label/);
    expect(() => loadConfig({ env: { CROSSBOOK_VENUE__venue_a__protocol: 'ftp' } })).toThrow(/venues\.0\.protocol/);
    expect(() => loadConfig({ env: { CROSSBOOK__server__colour: '"red"' } })).toThrow(ConfigError);
    // under a day: a late minute rebuilds its day candle from the minutes kept
    expect(() => loadConfig({ env: { CROSSBOOK__persistence__minuteCandleRetentionDays: '0.5' } })).toThrow(/persistence\.minuteCandleRetentionDays/);
    expect(() => loadConfig({ overrides: { capture: { retention: { days: -1 } } } })).toThrow(/capture\.retention\.days/);
    expect(() => loadConfig({ overrides: { capture: { retention: { bytes: 1000 } } } })).toThrow(/capture\.retention\.bytes/);
    expect(() => loadConfig({ overrides: { capture: { enabled: 'yes' } } })).toThrow(/capture\.enabled/);
    expect(() => loadConfig({ overrides: { capture: { checkpointIntervalMs: 10 } } })).toThrow(/capture\.checkpointIntervalMs/);
    expect(() => loadConfig({ overrides: { capture: { replayCache: 'off' } } })).toThrow(/capture\.replayCache: .*expected boolean/);
    expect(loadConfig({ env: {} }).capture?.replayCache).toBe(true);
    expect(loadConfig({ env: { CROSSBOOK__capture__replayCache: 'false' } }).capture?.replayCache).toBe(false);
    expect(loadConfig({ env: { CROSSBOOK__persistence__minuteCandleRetentionDays: '30' } }).persistence.minuteCandleRetentionDays).toBe(30);
  });

  it('takes wallet and alert thresholds from config, rejecting bad ones by name', () => {
    const c = loadConfig({ env: { CROSSBOOK__signals__alerts__smartMinUsd: '50', CROSSBOOK__signals__wallets__horizonMs: '300000' } });
    expect(c.signals?.alerts?.smartMinUsd).toBe(50);
    expect(c.signals?.alerts?.insiderMinMoveUnits).toBe(600); // the default file's value
    expect(c.signals?.wallets?.horizonMs).toBe(300_000);
    expect(() => loadConfig({ env: { CROSSBOOK__signals__alerts__smartMinUsd: '-1' } })).toThrow(/signals\.alerts\.smartMinUsd/);
    expect(() => loadConfig({ env: { CROSSBOOK__signals__wallets__smartMinHitRate: '1.5' } })).toThrow(/signals\.wallets\.smartMinHitRate/);
    expect(() => loadConfig({ env: { CROSSBOOK__signals__alerts__smartMinUSD: '5' } })).toThrow(/smartMinUSD/);
  });

  it('takes the memory windows (recent trades, minute volume, smart flow) from config, rejecting bad ones by name', () => {
    const d = loadConfig({ env: {} });
    expect(d.memory.recentTrades).toBe(100_000);
    expect(d.signals?.wallets?.volumeRetentionMs).toBe(48 * 3_600_000);
    expect(d.signals?.wallets?.smartFlowMs).toBe(24 * 3_600_000);
    const c = loadConfig({
      env: {
        CROSSBOOK__memory__recentTrades: '20000',
        CROSSBOOK__signals__wallets__volumeRetentionMs: '450000',
        CROSSBOOK__signals__wallets__smartFlowMs: '450000',
      },
    });
    expect([c.memory.recentTrades, c.signals?.wallets?.volumeRetentionMs, c.signals?.wallets?.smartFlowMs]).toEqual([20_000, 450_000, 450_000]);
    expect(() => loadConfig({ env: { CROSSBOOK__memory__recentTrades: '10' } })).toThrow(/memory\.recentTrades/);
    expect(() => loadConfig({ env: { CROSSBOOK__signals__wallets__smartFlowMs: '5' } })).toThrow(/signals\.wallets\.smartFlowMs/);
  });

  it('reads an override file and reports unreadable or invalid files', () => {
    const dir = tempDir('cb-cfg-');
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ server: { port: 1234 }, venues: { venue_h: { slug: 'p2p' } } }));
    const c = loadConfig({ env: { CROSSBOOK_CONFIG: good } });
    expect(c.server.port).toBe(1234);
    expect(c.venues[7]!.slug).toBe('p2p');
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"server": ');
    expect(() => loadConfig({ env: { CROSSBOOK_CONFIG: bad } })).toThrow(/not valid JSON/);
    expect(() => loadConfig({ env: { CROSSBOOK_CONFIG: join(dir, 'missing.json') } })).toThrow(/cannot read config file/);
  });
});
