/** The last day a "by <date>" deadline covers. */
import { MONTHS, MONTH_RE, addDays, daysInMonth, etParts, isoDay, yearNear, type findDate, type findTime } from '../text.js';
import type { Ctx } from './context.js';

const RE_MONTH_DEADLINE = new RegExp(`\\b(?:in|by|by the end of|by end of|before the end of|during) (${MONTH_RE})\\b(?!\\.? \\d)(?:,? (20\\d{2}))?`);
const RE_YEAR_DEADLINE = new RegExp(`\\b(?:end of|by|in|before) (?:the end of )?(?:(${MONTH_RE}) )?(20\\d{2})\\b`);

/**
 * The last day a "by" deadline covers: "by Dec 31, 2026 at 11:59 PM ET" and "by Jan 1, 2027 at
 * 12:00am ET" both end with December 31, 2026; "in 2026", "by the end of 2026" likewise;
 * "before 2027" is the day before.
 */
export function deadline(ctx: Ctx, t: string, td: ReturnType<typeof findDate>, tm: ReturnType<typeof findTime>): string | undefined {
  const before = /\bbefore\b/.test(t);
  if (td) {
    const y = td.y ?? (ctx.close !== undefined ? yearNear(ctx.close, td.m, td.d) : undefined);
    if (!y) return undefined;
    let day = isoDay(y, td.m, td.d);
    if ((tm && tm.minutes === 0) || before) day = addDays(day, -1);
    return day;
  }
  const monthOnly = RE_MONTH_DEADLINE.exec(t);
  if (monthOnly) {
    const m = MONTHS[monthOnly[1]!]!;
    const y = monthOnly[2] ? Number(monthOnly[2]) : ctx.close !== undefined ? yearNear(ctx.close, m) : undefined;
    if (y) return isoDay(y, m, daysInMonth(y, m));
  }
  if (/\bthis year\b|\bend of (?:the )?year\b/.test(t) && ctx.close !== undefined) return isoDay(etParts(ctx.close).y, 12, 31);
  const endOf = RE_YEAR_DEADLINE.exec(t);
  if (endOf) {
    const y = Number(endOf[2]);
    if (endOf[1]) {
      const m = MONTHS[endOf[1]]!;
      return /\bbefore\b/.test(endOf[0]) ? addDays(isoDay(y, m, 1), -1) : isoDay(y, m, daysInMonth(y, m));
    }
    return /\bbefore\b/.test(endOf[0]) ? isoDay(y - 1, 12, 31) : isoDay(y, 12, 31);
  }
  const kt = ctx.kt;
  if (kt && kt.yy !== undefined && kt.mon && kt.dd) return isoDay(2000 + kt.yy, kt.mon, kt.dd);
  return undefined;
}
