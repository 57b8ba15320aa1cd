import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './proc.js';

/** One line of a chart. */
export interface ChartSeries {
  readonly label: string;
  readonly color: string;
  /** One value per x; null (or a non-finite number) leaves a gap. */
  readonly ys: readonly (number | null | undefined)[];
  /** Plot against the right-hand axis (`ChartSpec.y2Label`) instead of the left one. */
  readonly right?: boolean;
}

/** A line chart of a report, drawn by uPlot. */
export interface ChartSpec {
  /** The element id, unique in the page. */
  readonly id: string;
  readonly title: string;
  readonly xs: readonly number[];
  /** The x axis title, with its unit. */
  readonly xLabel: string;
  /** Logarithmic x (world sizes spanning decades). */
  readonly xLog?: boolean;
  /** Tick labels in place of the x values, one per x (e.g. "step 2: 250 clients"); the ticks then sit on the xs. */
  readonly xTicks?: readonly string[];
  /** The left axis title, with its unit. */
  readonly yLabel: string;
  /** The right axis title, with its unit, for series marked `right`. */
  readonly y2Label?: string;
  readonly series: readonly ChartSeries[];
  readonly width?: number;
  readonly height?: number;
}

/**
 * uPlot's stylesheet and script as a `<style>` and a `<script>` for the page head, read from
 * node_modules when the report is written: a report is one self-contained file, opened anywhere,
 * with nothing fetched from the network.
 */
export function uplotHead(): string {
  const dir = join(projectRoot(), 'node_modules', 'uplot', 'dist');
  const css = readFileSync(join(dir, 'uPlot.min.css'), 'utf8');
  const js = readFileSync(join(dir, 'uPlot.iife.min.js'), 'utf8');
  // A script's text ends at the first "</script" whatever the JavaScript says; uPlot has none, and this keeps it so.
  return `<style>${css}</style><script>${js.replace(/<\/script/gi, '<\\/script')}</script>`;
}

const finite = (v: number | null | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The uPlot options (JSON-safe) and data of a chart. */
export function uplotOptions(c: ChartSpec): { opts: Record<string, unknown>; data: (number | null)[][] } {
  const right = c.series.some((s) => s.right);
  const axis = (label: string, scale: string, side?: number): Record<string, unknown> => ({
    label,
    scale,
    size: 70,
    labelSize: 20,
    ...(side === undefined ? {} : { side, grid: { show: false } }),
  });
  const opts = {
    title: c.title,
    width: c.width ?? 720,
    height: c.height ?? 300,
    scales: { x: { time: false, ...(c.xLog ? { distr: 3 } : {}) }, y: { auto: true }, ...(right ? { y2: { auto: true } } : {}) },
    axes: [{ label: c.xLabel, labelSize: 20 }, axis(c.yLabel, 'y'), ...(right ? [axis(c.y2Label ?? '', 'y2', 1)] : [])],
    series: [
      { label: c.xLabel },
      ...c.series.map((s) => ({ label: s.label, stroke: s.color, width: 2, scale: s.right ? 'y2' : 'y', spanGaps: false, points: { size: 7 } })),
    ],
    legend: { show: true },
  };
  return { opts, data: [[...c.xs], ...c.series.map((s) => c.xs.map((_, i) => finite(s.ys[i])))] };
}

const json = (v: unknown): string => JSON.stringify(v).replace(/</g, '\\u003c');

/** A chart as a `<div>` and the script that draws it (needs {@link uplotHead} in the page). */
export function uplotChart(c: ChartSpec): string {
  const { opts, data } = uplotOptions(c);
  // Tick labels are functions in uPlot, which JSON cannot carry: they are attached here.
  const ticks = c.xTicks
    ? `const L=${json(c.xTicks)},X=${json(c.xs)};o.axes[0].splits=()=>X;o.axes[0].values=(u,s)=>s.map((v)=>L[X.indexOf(v)]??'');o.series[0].value=(u,v)=>v==null?'–':L[X.indexOf(v)]??String(v);`
    : '';
  return `<div id="${c.id}" class="chart"></div><script>(()=>{const o=${json(opts)};${ticks}new uPlot(o,${json(data)},document.getElementById(${json(c.id)}));})();</script>`;
}
