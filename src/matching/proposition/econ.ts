/** Economic data thresholds: CPI, unemployment, GDP, payrolls. */
import { etParts, findMonth, isoMonth, yearNear } from '../text.js';
import { countryIn, note, type Ctx } from './context.js';
import { comparison, setThreshold, tickerStrike } from './threshold.js';
import type { Draft } from './types.js';

const INDICATORS: readonly (readonly [RegExp, string])[] = [
  [/\bcore (?:cpi|inflation)\b.*\b(?:year|annual|yoy|y\/y|12-month)\b|\b(?:annual|yoy|year-over-year) core\b/, 'core_cpi_yoy'],
  [/\bcore (?:cpi|inflation)\b/, 'core_cpi_mom'],
  [/\bpce\b/, 'pce'],
  [
    /\b(?:cpi|inflation)\b.*\b(?:year ending|annual|yoy|y\/y|12-month|year-over-year|year over year)\b|\b(?:annual|yoy|year-over-year)\b.*\b(?:cpi|inflation)\b/,
    'cpi_yoy',
  ],
  [/\b(?:cpi|inflation)\b.*\b(?:monthly|month-over-month|m\/m|mom)\b|\b(?:monthly)\b.*\b(?:cpi|inflation)\b/, 'cpi_mom'],
  [/\bu-?6\b/, 'unemployment_u6'],
  [/\bunemployment\b/, 'unemployment'],
  [/\bgdp\b/, 'gdp'],
  [/\b(?:payrolls|jobs report|nonfarm|jobs added)\b|\badd (?:more than |over |at least |fewer than |less than )?[\d,.]+k? jobs\b/, 'payrolls'],
  // Last resort: CPI with no period word; settled below by the size of the number.
  [/\b(?:cpi|inflation)\b/, 'cpi'],
];

const SERIES_INDICATOR: Readonly<Record<string, string>> = {
  CPIYOY: 'cpi_yoy',
  CPI: 'cpi_mom',
  CPICOREYOY: 'core_cpi_yoy',
  CPICORE: 'core_cpi_mom',
  U3: 'unemployment',
  GDP: 'gdp',
  PAYROLLS: 'payrolls',
};

/** An economic data threshold for a data month or quarter ("CPI above 2.4% in February 2026"). */
export function parseEcon(ctx: Ctx, d: Draft): boolean {
  const t = ctx.title.replace(/\?$/, '');
  const all = `${t} | ${ctx.event}`;
  const kt = ctx.kt;
  let ind = kt ? SERIES_INDICATOR[kt.series] : undefined;
  if (!ind)
    for (const [re, id] of INDICATORS)
      if (re.test(all)) {
        ind = id;
        break;
      }
  if (!ind) return false;
  let c = ind === 'payrolls' ? comparison(t.replace(/\bjobs?\b/g, ''), '$') : comparison(t, '%');
  if (!c) c = tickerStrike(ctx);
  if (!c) return false;
  if (ind === 'cpi') {
    // Monthly CPI changes sit within about ±1%, annual rates above: the number tells which.
    ind = Math.abs(c.value) <= 1.2 ? 'cpi_mom' : 'cpi_yoy';
    d.confidence -= 0.1;
  }
  // Period: a quarter for GDP, else the data month ("for the year ending in February 2026").
  let month: string | undefined;
  const q = /\bq([1-4])\b(?: (20\d{2}))?|\b(first|second|third|fourth) quarter(?: of)?(?: (20\d{2}))?/.exec(all);
  if (ind === 'gdp' && q) {
    const n = q[1] ? Number(q[1]) : ['first', 'second', 'third', 'fourth'].indexOf(q[3]!) + 1;
    const y = Number(q[2] ?? q[4] ?? '') || (kt?.yy !== undefined ? 2000 + kt.yy : ctx.close !== undefined ? etParts(ctx.close).y : NaN);
    if (Number.isFinite(y)) month = `${y}-Q${n}`;
  } else if (kt && kt.yy !== undefined && kt.mon) {
    month = isoMonth(2000 + kt.yy, kt.mon);
  } else {
    const f = findMonth(all, true);
    if (f) {
      const y = f.y ?? (ctx.close !== undefined ? yearNear(ctx.close, f.m, 15, true) : undefined);
      if (y) month = isoMonth(y, f.m);
    }
  }
  if (!month) return false;
  d.kind = 'econ_threshold';
  d.market_type = ind;
  d.subject = ind;
  d.subjectCandidates = [ind];
  d.subjectName = ind;
  d.month = month;
  // A US release unless the listing names another country ("Japan unemployment rate", "inflation
  // in Brazil"): the same indicator of two countries never settles alike.
  const country = countryIn(all);
  d.jurisdiction = country && country !== 'us' ? country : null;
  setThreshold(d, c, ind === 'payrolls' ? 'jobs' : 'pct');
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  return true;
}
