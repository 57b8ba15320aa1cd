import { describe, expect, it } from 'vitest';
import { feesReport } from '../../src/cli/arb.js';
import { loadConfig } from '../../src/config/load.js';

describe('crossbook arb --fees', () => {
  it('prints every venue with its schedule and worked examples, after overrides', () => {
    const out = feesReport(loadConfig({ env: {}, venueOverrides: { venue_b: { fees: { kind: 'taker_quadratic', rules: [{ rate: 0.01, round: 'none' }] } } } }));
    for (const slug of ['venue_a', 'venue_b', 'venue_c', 'venue_d', 'venue_e', 'venue_f', 'venue_g', 'venue_h']) expect(out).toContain(`${slug} (`);
    expect(out).toMatch(/venue_a \(kalshi\)[\s\S]*100 contracts at 50¢: \$1\.7500/);
    expect(out).toMatch(/venue_b \(polymarket\): taker_quadratic[\s\S]*100 contracts at 50¢: \$0\.2500/);
    expect(out).toMatch(/live: .*\$0\.7500/);
  });
});
