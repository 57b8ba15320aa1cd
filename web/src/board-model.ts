import type { Schemas, StreamSnapshot, StreamUpdate } from 'crossbook/client';

type Arb = Schemas['WsArb']['opportunities'][number];
type Ev = Schemas['WsEv']['opportunities'][number];

export interface Leg {
  readonly platform: string;
  readonly marketId: string;
  readonly side: string;
  readonly price: number;
  readonly size: number;
  readonly url: string | null;
}

/** One opportunity on the board: an arbitrage (two legs) or an EV bet (one leg). */
export interface Row {
  readonly id: string;
  readonly kind: 'arb' | 'ev';
  readonly groupId: number;
  readonly title: string;
  readonly category: string | null;
  /** Fee-net ROI, percent. */
  readonly roi: number;
  /** Executable size, contracts. */
  readonly size: number;
  readonly detectedAt: string | null;
  readonly legs: readonly Leg[];
  /** Set once it closed: why (arb_expired's close_reason, or "gone" when it left its group's list without one). */
  readonly closed?: { readonly reason: string; readonly at: number };
}

/** How often the board is ranked again by ROI, ms. */
export const RANK_MS = 1000;

const byRoi = (a: Row, b: Row): number => b.roi - a.roi || (a.id < b.id ? -1 : 1);

/** How long a closed opportunity stays on the board, fading, before it leaves. */
export const FADE_MS = 2500;

function legsOf(o: Arb | Ev): Leg[] {
  return (o.legs as readonly Record<string, unknown>[]).map((l) => ({
    platform: String(l['platform']),
    marketId: String(l['market_id']),
    side: String(l['side']),
    price: Number(l['price']),
    size: Number(l['size']),
    url: typeof l['url'] === 'string' ? l['url'] : null,
  }));
}

function rowOf(kind: 'arb' | 'ev', groupId: number, title: string, o: Arb | Ev): Row {
  const legs = legsOf(o);
  const rec = o as unknown as Record<string, unknown>;
  const id =
    typeof rec['opportunity_id'] === 'string'
      ? rec['opportunity_id']
      : `${kind}:${groupId}:${legs.map((l) => `${l.platform}:${l.marketId}:${l.side}`).join('|')}`;
  return {
    id,
    kind,
    groupId,
    title: typeof rec['title'] === 'string' ? rec['title'] : title,
    category: typeof rec['event_type'] === 'string' ? rec['event_type'] : null,
    roi: o.roi,
    size: o.size,
    detectedAt: typeof rec['detected_at'] === 'string' ? rec['detected_at'] : null,
    legs,
  };
}

/**
 * The board's state, outside the view: each group's live opportunities (a group's message replaces
 * its list), and the closed ones fading out. The view reads `rows()` after each `version` bump.
 */
export class BoardModel {
  private readonly groups = new Map<string, Row[]>();
  private readonly closed = new Map<string, Row>();
  /** Close reasons that arrived (arb_expired) before the group's new list. */
  private readonly reasons = new Map<string, string>();
  version = 0;
  messages = 0;
  private order: string[] = [];
  private rankedAt = -Infinity;

  /** An arb or ev message (snapshot or live): the group's opportunities now. */
  update(m: StreamUpdate, now: number): void {
    if (m.type !== 'arb' && m.type !== 'ev') return;
    this.messages++;
    this.replace(
      m.type,
      m.group_id,
      m.opportunities.map((o) => rowOf(m.type as 'arb' | 'ev', m.group_id, m.title, o)),
      now,
    );
  }

  /** A REST resync of a group (after a gap or reconnect). */
  snapshot(s: StreamSnapshot, now: number): void {
    if (s.channel !== 'arb' && s.channel !== 'ev') return;
    const rows = (s.opportunities as readonly (Arb | Ev)[]).map((o) => rowOf(s.channel as 'arb' | 'ev', s.group_id, '', o));
    this.replace(s.channel, s.group_id, rows, now);
  }

  /** arb_expired / ev_expired: the opportunity closed, with its reason. */
  expired(m: Schemas['WsExpired'], now: number): void {
    this.messages++;
    const key = `${m.channel}:${m.group_id}`;
    const list = this.groups.get(key);
    const row = list?.find((r) => r.id === m.opportunity_id);
    if (row && list) {
      this.groups.set(
        key,
        list.filter((r) => r !== row),
      );
      this.closed.set(row.id, { ...row, closed: { reason: m.close_reason, at: now } });
    } else {
      const gone = this.closed.get(m.opportunity_id);
      // Its group's new list came first: give the fading row its reason.
      if (gone) this.closed.set(gone.id, { ...gone, closed: { reason: m.close_reason, at: gone.closed!.at } });
      else this.reasons.set(m.opportunity_id, m.close_reason);
    }
    this.version++;
  }

  private replace(kind: 'arb' | 'ev', groupId: number, rows: Row[], now: number): void {
    const key = `${kind}:${groupId}`;
    const ids = new Set(rows.map((r) => r.id));
    for (const old of this.groups.get(key) ?? [])
      if (!ids.has(old.id) && !this.closed.has(old.id)) {
        this.closed.set(old.id, { ...old, closed: { reason: this.reasons.get(old.id) ?? 'gone', at: now } });
        this.reasons.delete(old.id);
      }
    for (const id of ids) this.closed.delete(id); // reopened under the same id
    if (rows.length) this.groups.set(key, rows);
    else this.groups.delete(key);
    if (this.reasons.size > 10_000) this.reasons.clear();
    this.version++;
  }

  /** Drops closed opportunities that have faded long enough; true when any left. */
  sweep(now: number): boolean {
    let any = false;
    for (const [id, r] of this.closed)
      if (now - r.closed!.at >= FADE_MS) {
        this.closed.delete(id);
        any = true;
      }
    if (any) this.version++;
    return any;
  }

  /**
   * Live and fading rows, best ROI first as of the last ranking: the order is ranked again at most
   * every RANK_MS, and in between a row keeps its place (a new one goes in where its ROI puts it),
   * so rows do not jump around as their ROI moves by a hair many times a second.
   */
  rows(now: number): Row[] {
    const byId = new Map<string, Row>();
    for (const list of this.groups.values()) for (const r of list) byId.set(r.id, r);
    for (const r of this.closed.values()) byId.set(r.id, r);
    if (now - this.rankedAt >= RANK_MS) {
      this.rankedAt = now;
      this.order = [...byId.values()].sort(byRoi).map((r) => r.id);
    } else {
      const kept = this.order.filter((id) => byId.has(id));
      const known = new Set(kept);
      for (const r of byId.values()) {
        if (known.has(r.id)) continue;
        const at = kept.findIndex((id) => byRoi(r, byId.get(id)!) < 0);
        kept.splice(at < 0 ? kept.length : at, 0, r.id);
      }
      this.order = kept;
    }
    return this.order.map((id) => byId.get(id)!);
  }

  get liveCount(): number {
    let n = 0;
    for (const list of this.groups.values()) n += list.length;
    return n;
  }
}

export interface Filter {
  readonly kind: 'all' | 'arb' | 'ev';
  readonly venue: string;
  readonly category: string;
  readonly minRoi: number;
}

export function matches(r: Row, f: Filter): boolean {
  if (f.kind !== 'all' && r.kind !== f.kind) return false;
  if (f.venue && !r.legs.some((l) => l.platform === f.venue)) return false;
  if (f.category && r.category !== f.category) return false;
  return r.roi >= f.minRoi;
}
