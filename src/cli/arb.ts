import type { Config } from '../config/schema.js';
import { takerFee, type FeeContext } from '../signals/fees.js';

/**
 * `crossbook arb --fees`: the fee schedule in force per venue (after config overrides), with
 * worked examples, so a user can check what /arb and /ev ROI is net of.
 */
export function feesReport(config: Config): string {
  const lines: string[] = ['Taker fees in force (ROI in /arb and /ev is net of these):', ''];
  const ex = (cents: number, n: number, ctx: FeeContext, f: Config['venues'][number]['fees']): string =>
    `$${(takerFee(f, cents * 100, n, ctx) / 10_000).toFixed(4)}`;
  for (const v of config.venues) {
    if (!v.enabled) continue;
    const f = v.fees;
    lines.push(`${v.slug} (${v.protocol}): ${f.kind}${f.note ? ` — ${f.note}` : ''}`);
    if (f.kind === 'taker_quadratic') {
      for (const r of f.rules) {
        const when = r.when
          ? Object.entries(r.when)
              .map(([k, val]) => `${k}=${Array.isArray(val) ? val.join('|') : String(val)}`)
              .join(' ')
          : 'otherwise';
        lines.push(`    ${when.padEnd(34)} rate ${r.rate} × C × P × (1−P)${r.round === 'ceil_cent' ? ', rounded up to the cent' : ''}`);
      }
    } else if (f.kind === 'profit_share') lines.push(`    ${(f.rate * 100).toFixed(1)}% of the profit of a winning position (counted in full)`);
    const ctxs: [string, FeeContext][] =
      f.kind === 'taker_quadratic' && f.rules.some((r) => r.when)
        ? [
            ['pre-game', {}],
            ['live', { live: true }],
            ['NFL futures', { futures: true, league: 'NFL' }],
          ]
        : [['', {}]];
    for (const [name, ctx] of ctxs)
      lines.push(
        `    ${name ? `${name}: ` : ''}1 contract at 10¢/50¢/90¢: ${[10, 50, 90].map((c) => ex(c, 1, ctx, f)).join(' / ')}; 100 contracts at 50¢: ${ex(50, 100, ctx, f)}`,
      );
  }
  return lines.join('\n');
}
