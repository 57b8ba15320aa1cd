/** Number formatting shared by the pages: cents, sizes, ROI, ages (tabular figures come from CSS). */

const sizeFmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const usdFmt = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0 });

/** A price in cents (0–100), one decimal when it has one; an em dash when missing. */
export function cents(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  return `${Number.isInteger(v) ? v : v.toFixed(1)}¢`;
}

export function size(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : sizeFmt.format(v);
}

export function usd(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : usdFmt.format(v);
}

export function pct(v: number | null | undefined, digits = 2): string {
  return v === null || v === undefined ? '—' : `${v.toFixed(digits)}%`;
}

/** How long ago an ISO time was, compactly (12s, 4m 05s, 2h 10m). */
export function age(iso: string | null | undefined, now: number): string {
  if (!iso) return '—';
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** The dashboard's own link to a market page. */
export function marketHref(platform: string, marketId: string, groupId?: number | null): string {
  const q = new URLSearchParams({ platform, id: marketId });
  if (groupId !== undefined && groupId !== null) q.set('group', String(groupId));
  return `/app/market?${q.toString()}`;
}

/** Close reasons of arb_expired / ev_expired, in words. */
export const CLOSE_REASON_TEXT: Readonly<Record<string, string>> = {
  group_changed: 'group changed',
  market_closed: 'market closed',
  fee_change: 'fees changed',
  size_gone: 'size gone',
  book_moved: 'book moved',
};
