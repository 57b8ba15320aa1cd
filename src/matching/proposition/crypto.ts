/** Crypto prices: the value at a time, or a touch above or below by a deadline. */
import { etParts, findDate, findTime, isoDay, yearNear } from '../text.js';
import { note, type Ctx } from './context.js';
import { deadline } from './deadline.js';
import { MONEY, amount, comparison, setThreshold, tickerStrike, type Cmp } from './threshold.js';
import type { Draft } from './types.js';

const ASSETS: readonly (readonly [RegExp, string, string, boolean])[] = [
  [/\bbitcoin\b/, 'BTC', 'Bitcoin', true],
  [/\bethereum\b|\bether\b/, 'ETH', 'Ethereum', true],
  [/\bsolana\b/, 'SOL', 'Solana', true],
  [/\bxrp\b|\bripple\b/, 'XRP', 'XRP', true],
  [/\bdogecoin\b/, 'DOGE', 'Dogecoin', true],
  [/\bcardano\b/, 'ADA', 'Cardano', true],
  [/\blitecoin\b/, 'LTC', 'Litecoin', true],
  [/\bbtc\b/, 'BTC', 'Bitcoin', false],
  [/\beth\b/, 'ETH', 'Ethereum', false],
  [/\bsol\b/, 'SOL', 'Solana', false],
  [/\bdoge\b/, 'DOGE', 'Dogecoin', false],
  [/\bbnb\b/, 'BNB', 'BNB', false],
  [/\bhype\b|\bhyperliquid\b/, 'HYPE', 'Hyperliquid', false],
];

const PRICE_WORDS = /\$|\bprice\b|\babove\b|\bbelow\b|\breach\b|\bhit\b|\bdip\b/;
const CRYPTO_EXCLUDE =
  /\bup or down\b|\ball[- ]time high\b|\bmarket cap\b|\betf\b|\bflip(?:pening)?\b|\bdominance\b|\breserve\b|\bhalving\b|\bunban\b|\bstrategic\b/;

function assetOf(ctx: Ctx, s: string): { code: string; name: string } | undefined {
  const kt = ctx.kt;
  if (kt) {
    const m = /^(BTC|ETH|SOL|XRP|DOGE|ADA|LTC|BNB|HYPE)(D|MAXY|MINY|MAX|MIN|MAXMON|MINMON|W|)$/.exec(kt.series);
    if (m) {
      const a = ASSETS.find((x) => x[1] === m[1]);
      return { code: m[1]!, name: a?.[2] ?? m[1]! };
    }
  }
  for (const [re, code, name, strong] of ASSETS) if (re.test(s) && (strong || PRICE_WORDS.test(s))) return { code, name };
  return undefined;
}

const RE_TOUCH_UP = new RegExp(`\\b(reach|hit|touch|surpass|break|exceed|climb to|rise to)\\s+${MONEY}`);
const RE_TOUCH_DOWN = new RegExp(`\\b(dip to|dip below|fall to|fall below|drop to|drop below|sink to|crash to|go below|go under)\\s+${MONEY}`);
/** Polymarket lists "What price will Bitcoin hit in 2026?" per strike: outcome "↑ 150,000" / "↓ 60,000". */
const RE_ARROW = new RegExp(`^([↑↓])\\s*${MONEY}$`);

/** A crypto price: above/below at a time, a range, or a touch ("reach", "dip to") by a deadline. */
export function parseCrypto(ctx: Ctx, d: Draft): boolean {
  const t = ctx.title.replace(/\?$/, '');
  const asset = assetOf(ctx, t);
  if (!asset) return false;
  if (CRYPTO_EXCLUDE.test(t)) return false;
  const kt = ctx.kt;
  const series = kt ? /(MAXY|MINY|MAXMON|MINMON|MAX|MIN|D|W)?$/.exec(kt.series)?.[1] : undefined;
  let mode: 'at' | 'max_by' | 'min_by';
  let c: Cmp | undefined;
  const arrow = RE_ARROW.exec(ctx.outcome);
  const touchUp = RE_TOUCH_UP.exec(t);
  const touchDown = RE_TOUCH_DOWN.exec(t);
  const byDeadline = /\bby\b|\bbefore\b|\bin 20\d{2}\b|\bthis year\b|\bend of\b/.test(t);
  if (arrow) {
    // "↑ 150,000" reads "reach $150,000", "↓ 60,000" reads "dip to $60,000".
    mode = arrow[1] === '↑' ? 'max_by' : 'min_by';
    c = { cmp: arrow[1] === '↑' ? '>=' : '<=', value: amount(arrow[2]!) };
  } else if (touchUp) {
    mode = 'max_by';
    c = { cmp: /surpass|break|exceed/.test(touchUp[1]!) ? '>' : '>=', value: amount(touchUp[2]!) };
  } else if (touchDown) {
    mode = 'min_by';
    c = { cmp: /below|under/.test(touchDown[1]!) ? '<' : '<=', value: amount(touchDown[2]!) };
  } else {
    c = comparison(t, '$');
    if (c && !/\d/.test(String(c.value))) c = undefined;
    if (series === 'MAXY' || series === 'MAX' || series === 'MAXMON') mode = 'max_by';
    else if (series === 'MINY' || series === 'MIN' || series === 'MINMON') mode = 'min_by';
    else if (byDeadline && c && (c.cmp === '>' || c.cmp === '>=')) mode = 'max_by';
    else if (byDeadline && c && (c.cmp === '<' || c.cmp === '<=')) mode = 'min_by';
    else mode = 'at';
    if (!c && ctx.outcome) c = comparison(ctx.outcome, '$');
    if (!c) c = tickerStrike(ctx);
    if (c && c.cmp === '=') c = undefined;
  }
  if (!c || !Number.isFinite(c.value)) return false;
  // When: a deadline day for touches, an observation day and clock time for "at".
  let date: string | undefined;
  let time: string | undefined;
  const td = findDate(t);
  const tm = findTime(t);
  if (mode === 'at') {
    if (td) {
      const y = td.y ?? (ctx.close !== undefined ? yearNear(ctx.close, td.m, td.d) : kt?.yy !== undefined ? 2000 + kt.yy : undefined);
      if (y) date = isoDay(y, td.m, td.d);
    } else if (kt && kt.yy !== undefined && kt.mon && kt.dd) {
      date = isoDay(2000 + kt.yy, kt.mon, kt.dd);
    }
    if (tm) {
      let minutes = tm.minutes;
      if (tm.zone === 'utc' || tm.zone === 'gmt') {
        // A UTC clock time: shift the instant to US Eastern (its day may change too).
        if (date) {
          const ms = Date.parse(`${date}T00:00:00Z`) + minutes * 60_000;
          const p = etParts(ms);
          date = isoDay(p.y, p.m, p.d);
          minutes = p.hour * 60 + p.minute;
        }
      } else if (tm.zone === 'pt' || tm.zone === 'pst' || tm.zone === 'pdt') minutes = (minutes + 180) % 1440;
      else if (tm.zone === 'ct' || tm.zone === 'cst' || tm.zone === 'cdt') minutes = (minutes + 60) % 1440;
      time = `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
    } else if (kt?.clock && kt.clock.length >= 2) {
      time = `${kt.clock.slice(0, 2)}:${kt.clock.length === 4 ? kt.clock.slice(2) : '00'}`;
    }
  } else {
    date = deadline(ctx, t, td, tm);
  }
  if (!date) return false;
  d.kind = 'crypto_price';
  d.mode = mode;
  d.market_type = `${asset.code.toLowerCase()}_${mode === 'at' ? (c.cmp === 'range' ? 'range' : c.cmp.startsWith('<') ? 'below' : 'above') : mode === 'max_by' ? 'max' : 'min'}`;
  d.subject = `asset:${asset.code}`;
  d.subjectCandidates = [d.subject];
  d.subjectName = asset.name;
  d.date = date;
  d.dateSource = 'title';
  d.time = time ?? null;
  setThreshold(d, c, 'usd');
  if (ctx.outcome === 'no') d.negated = true;
  note(d, 'title');
  if (kt) note(d, 'ticker');
  return true;
}
