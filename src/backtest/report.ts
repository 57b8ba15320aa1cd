import { closeSync, createReadStream, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { uplotChart, uplotHead, type ChartSpec } from '../capacity/charts.js';
import type { OpportunityRecord } from '../signals/lifecycle/record.js';
import { Report, Summary, Trade } from './schema.js';
import type { TradeSink } from './taker.js';

/** What report.json says about the run besides its runs. */
export type ReportMeta = Omit<Report, 'runs' | 'events'>;

/** Running figures of one latency: nothing grows with the window but the per-minute, per-pair and per-category maps. */
class Agg {
  opportunities = 0;
  fillable = 0;
  net = 0;
  broken = 0;
  contracts = 0;
  fees = 0;
  /** Net per minute of signal time. */
  readonly perMinute = new Map<number, number>();
  readonly perPair = new Map<string, number>();
  readonly perCategory = new Map<string, number>();
  trades = 0;
  private fd: number;
  private buf: string[] = [];

  constructor(readonly file: string) {
    this.fd = openSync(file, 'w');
  }

  add(t: Trade | undefined): void {
    this.opportunities++;
    if (!t) return;
    // Validated against the report's schema as it is written: a bad trade fails here, not in a reader.
    const line = JSON.stringify(Trade.parse(t));
    const filled = Math.min(...t.legs.map((l) => l.size));
    if (filled > 0) this.fillable++;
    if (t.status === 'broken') this.broken++;
    this.net += t.net_usd;
    for (const l of t.legs) {
      this.contracts += l.size;
      this.fees += l.fee_usd;
    }
    if (t.unwind) this.fees += t.unwind.fee_usd;
    const minute = Math.floor(Date.parse(t.signal_at) / 60_000) * 60;
    this.perMinute.set(minute, (this.perMinute.get(minute) ?? 0) + t.net_usd);
    const pair = [...new Set(t.legs.map((l) => l.platform))].sort().join(' / ');
    this.perPair.set(pair, (this.perPair.get(pair) ?? 0) + t.net_usd);
    const cat = t.category ?? '(none)';
    this.perCategory.set(cat, (this.perCategory.get(cat) ?? 0) + t.net_usd);
    this.buf.push(line);
    this.trades++;
    if (this.buf.length >= 512) this.drain();
  }

  close(): void {
    this.drain();
    closeSync(this.fd);
  }

  summary(beyondWindow: number): Summary {
    const r2 = (x: number): number => Math.round(x * 100) / 100;
    return Summary.parse({
      opportunities: this.opportunities,
      fillable: this.fillable,
      net_usd: r2(this.net),
      broken_legs: this.broken,
      contracts: Math.round(this.contracts * 1e4) / 1e4,
      fees_usd: r2(this.fees),
      fill_rate: this.opportunities === 0 ? 0 : Math.round((this.fillable / this.opportunities) * 1e4) / 1e4,
      beyond_window: beyondWindow,
    });
  }

  private drain(): void {
    if (this.buf.length === 0) return;
    writeSync(this.fd, this.buf.join('\n') + '\n');
    this.buf = [];
  }
}

/** Opportunity lifetimes in bins of powers of two (ms), counted as the lifecycle closes them. */
const LIFETIME_BINS = 24;

/**
 * The backtest's report, streamed: each trade goes to a per-latency NDJSON file as it happens and
 * into running summaries; at the end report.json is written by streaming those files into it, and
 * report.html from the summaries. Memory holds no trade list, only per-minute and per-pair totals.
 */
export class ReportWriter implements TradeSink {
  private readonly aggs = new Map<number, Agg>();
  private readonly lifetimes = new Array<number>(LIFETIME_BINS).fill(0);
  private closedCount = 0;

  constructor(
    private readonly out: string,
    private readonly meta: ReportMeta,
    private readonly latencies: readonly number[],
  ) {
    mkdirSync(out, { recursive: true });
    for (const l of latencies) this.aggs.set(l, new Agg(join(out, `.trades-${l}.ndjson`)));
  }

  result(latencyMs: number, trade: Trade | undefined): void {
    this.aggs.get(latencyMs)!.add(trade);
  }

  /** A closed opportunity of the strategy's kind: its lifetime goes to the histogram. */
  closed(r: OpportunityRecord): void {
    if (r.kind !== this.meta.strategy) return;
    this.closedCount++;
    const bin = Math.min(LIFETIME_BINS - 1, r.duration_ms <= 1 ? 0 : Math.ceil(Math.log2(r.duration_ms)));
    this.lifetimes[bin]!++;
  }

  /** Writes report.json and report.html; returns the closing lines, one per latency. */
  async finish(events: number, beyondWindow: ReadonlyMap<number, number>): Promise<string[]> {
    const lines: string[] = [];
    const fd = openSync(join(this.out, 'report.json'), 'w');
    try {
      const head = JSON.stringify({ ...this.meta, events });
      writeSync(fd, `${head.slice(0, -1)},"runs":[`);
      let first = true;
      for (const lat of this.latencies) {
        const agg = this.aggs.get(lat)!;
        agg.close();
        const summary = agg.summary(beyondWindow.get(lat) ?? 0);
        const line = closingLine(summary, lat);
        lines.push(line);
        writeSync(fd, `${first ? '' : ','}{"latency_ms":${lat},"summary":${JSON.stringify(summary)},"line":${JSON.stringify(line)},"trades":[`);
        first = false;
        let n = 0;
        for await (const t of createInterface({ input: createReadStream(agg.file, 'utf8'), crlfDelay: Infinity })) {
          if (t === '') continue;
          writeSync(fd, n++ === 0 ? t : `,${t}`);
        }
        writeSync(fd, ']}');
        rmSync(agg.file, { force: true });
      }
      writeSync(fd, ']}\n');
    } finally {
      closeSync(fd);
    }
    writeFileSync(join(this.out, 'report.html'), this.html(lines, beyondWindow));
    return lines;
  }

  private html(lines: readonly string[], beyondWindow: ReadonlyMap<number, number>): string {
    const lats = this.latencies;
    const aggs = lats.map((l) => this.aggs.get(l)!);
    const colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];
    const series = (ys: (a: Agg) => (number | null)[]) => aggs.map((a, i) => ({ label: `${lats[i]} ms`, color: colors[i % colors.length]!, ys: ys(a) }));
    const minutes = [...new Set(aggs.flatMap((a) => [...a.perMinute.keys()]))].sort((x, y) => x - y);
    const cumulative = (a: Agg): number[] => {
      let s = 0;
      return minutes.map((m) => (s += a.perMinute.get(m) ?? 0));
    };
    const t0 = minutes[0] ?? 0;
    const keyed = (id: string, title: string, xLabel: string, keyOf: (a: Agg) => Map<string, number>): ChartSpec => {
      const keys = [...new Set(aggs.flatMap((a) => [...keyOf(a).keys()]))].sort();
      return {
        id,
        title,
        xs: keys.map((_, i) => i),
        xTicks: keys,
        xLabel,
        yLabel: 'net PnL (USD)',
        series: series((a) => keys.map((k) => keyOf(a).get(k) ?? null)),
      };
    };
    const charts: ChartSpec[] = [
      {
        id: 'pnl',
        title: 'Cumulative PnL after fees',
        xs: minutes.map((m) => (m - t0) / 60),
        xLabel: 'minutes since the first trade',
        yLabel: 'cumulative net PnL (USD)',
        series: series(cumulative),
      },
      keyed('pairs', 'PnL per venue pair', 'venue pair', (a) => a.perPair),
      keyed('categories', 'PnL per category', 'category', (a) => a.perCategory),
      {
        id: 'lifetimes',
        title: `Opportunity lifetimes (${this.closedCount} closed in the window)`,
        xs: this.lifetimes.map((_, i) => 2 ** i),
        xLog: true,
        xLabel: 'lifetime, up to (ms)',
        yLabel: 'opportunities',
        series: [{ label: 'closed', color: '#444', ys: this.lifetimes }],
      },
      {
        id: 'fillrate',
        title: 'Fill rate against latency',
        xs: [...lats],
        xLabel: 'latency (ms)',
        yLabel: 'fillable / opportunities',
        y2Label: 'net PnL (USD)',
        series: [
          { label: 'fill rate', color: '#1f77b4', ys: aggs.map((a) => a.summary(0).fill_rate) },
          { label: 'net USD', color: '#2ca02c', ys: aggs.map((a) => a.summary(0).net_usd), right: true },
        ],
      },
    ];
    const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    const rows = lats.map((l, i) => `<li>${esc(lines[i]!)}${beyondWindow.get(l) ? ` (${beyondWindow.get(l)} past the window's end)` : ''}</li>`).join('');
    return `<!doctype html><html><head><meta charset="utf-8"><title>crossbook backtest</title>
${uplotHead()}<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:780px}.chart{margin:1.5em 0}</style></head><body>
<h1>Backtest: ${esc(this.meta.strategy)} ${esc(this.meta.window.from)} → ${esc(this.meta.window.to)}</h1>
<p>A taker acting on every opportunity the engine opened, each leg walking the recorded book at signal time + latency, paying taker fees (${esc(this.meta.fees)}), at most $${this.meta.max_usd} an opportunity.</p>
<ul>${rows}</ul>
${charts.map(uplotChart).join('\n')}
</body></html>
`;
  }
}

const money = (x: number): string => `${x < 0 ? '-' : ''}$${Math.abs(x).toLocaleString('en-US', { maximumFractionDigits: 0 })}`;

/** The line a trader reads, e.g. "412 opportunities, 37 fillable at 250 ms, $1,284 net after fees, 3 broken legs". */
export function closingLine(s: Summary, latencyMs: number): string {
  const plural = (n: number, w: string): string => `${n.toLocaleString('en-US')} ${w}${n === 1 ? '' : 's'}`;
  return `${plural(s.opportunities, 'opportunity').replace('opportunitys', 'opportunities')}, ${s.fillable.toLocaleString('en-US')} fillable at ${latencyMs} ms, ${money(s.net_usd)} net after fees, ${plural(s.broken_legs, 'broken leg')}`;
}
