import { memo } from 'preact/compat';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { BoardModel, matches, RANK_MS, type Filter, type Row } from '../board-model.js';
import { age, CLOSE_REASON_TEXT, cents, marketHref, pct, size } from '../format.js';
import { Frame } from '../frame.js';
import { perf } from '../perf.js';
import { useStream } from '../session.js';
import { useNow } from '../useNow.js';
import { useVenues } from '../venues.js';
import { NumTh } from '../components/NumTh.js';

const NO_FILTER: Filter = { kind: 'all', venue: '', category: '', minRoi: 0 };
/** Rows drawn at most (the best by ROI); the rest are counted. */
const MAX_ROWS = 300;

/** Arbitrage and EV, live over the WebSocket (channels arb and ev, every group). */
export function Board() {
  const model = useRef(new BoardModel()).current;
  const [, setVersion] = useState(0);
  const [filter, setFilter] = useState<Filter>(NO_FILTER);
  const [notice, setNotice] = useState<string | undefined>();
  const frame = useRef(new Frame(() => setVersion((v) => v + 1))).current;
  const changed = () => frame.request();
  useStream(
    {
      onUpdate: (m) => {
        model.update(m, Date.now());
        changed();
      },
      onSnapshot: (s) => {
        model.snapshot(s, Date.now());
        changed();
      },
      onExpired: (m) => {
        model.expired(m, Date.now());
        changed();
      },
      onNotice: (m) => {
        if (m.type === 'error') setNotice(`${m.code}: ${m.message}`);
      },
    },
    (s) => {
      s.subscribeSignals('arb');
      s.subscribeSignals('ev');
    },
    [],
  );
  // Faded rows leave and the board is ranked again, once a second.
  useEffect(() => {
    const t = setInterval(() => {
      model.sweep(Date.now());
      changed(); // and the ranking is renewed
    }, RANK_MS);
    return () => clearInterval(t);
  }, []);
  // Render time per update: from this render's start to the DOM committed.
  const renderStart = performance.now();
  useLayoutEffect(() => {
    const batch = frame.committed();
    if (batch) perf.record({ ms: performance.now() - renderStart, latency: performance.now() - batch.since, rows: shown.length, messages: batch.messages });
  });

  const rows = model.rows(Date.now());
  const categories = useMemo(() => [...new Set(rows.map((r) => r.category).filter((c): c is string => c !== null))].sort(), [rows.length, model.version]);
  const shown = rows.filter((r) => matches(r, filter));
  return (
    <section aria-labelledby="board-h">
      <h1 id="board-h">Arbitrage and EV</h1>
      <Filters filter={filter} categories={categories} onChange={setFilter} />
      <p class="meta" role="status" aria-live="polite">
        <span data-testid="live-count">{model.liveCount}</span> open · showing <span data-testid="shown-count">{Math.min(shown.length, MAX_ROWS)}</span>
        {shown.length > MAX_ROWS ? ` of ${shown.length}` : ''} · {model.messages} messages
        {notice ? <span class="error"> · {notice}</span> : null}
      </p>
      <div class="scroll">
        <table class="board" aria-describedby="board-h">
          <colgroup>
            <col class="c-kind" />
            <col class="c-title" />
            <col class="c-legs" />
            <col class="c-num" />
            <col class="c-num" />
            <col class="c-age" />
          </colgroup>
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Opportunity</th>
              <th scope="col">Legs: venue, side, price × size</th>
              <NumTh>ROI (net)</NumTh>
              <NumTh>Size</NumTh>
              <NumTh>Age</NumTh>
            </tr>
          </thead>
          <tbody>
            {shown.slice(0, MAX_ROWS).map((r) => (
              <BoardRow key={r.id} r={r} />
            ))}
          </tbody>
        </table>
        {rows.length === 0 ? (
          <p class="empty">Waiting for opportunities…</p>
        ) : shown.length === 0 ? (
          <p class="empty">No opportunity passes the filters.</p>
        ) : null}
      </div>
    </section>
  );
}

const BoardRow = memo(function BoardRow({ r }: { r: Row }) {
  return (
    <tr data-id={r.id} data-kind={r.kind} data-closed={r.closed?.reason} class={r.closed ? 'closing' : undefined}>
      <td>
        <span class={`tag ${r.kind}`}>{r.kind === 'arb' ? 'ARB' : 'EV'}</span>
      </td>
      <td class="title">
        <a href={`/app/groups?id=${r.groupId}`} title={`match group ${r.groupId}`}>
          {r.title || `group ${r.groupId}`}
        </a>
        <div class="sub">
          {r.category ?? 'uncategorized'}
          {r.closed ? <span class="reason"> · closed: {CLOSE_REASON_TEXT[r.closed.reason] ?? r.closed.reason}</span> : null}
        </div>
      </td>
      <td class="legs">
        {r.legs.map((l) => (
          <div class="leg" key={`${l.platform}:${l.marketId}:${l.side}`}>
            <a href={marketHref(l.platform, l.marketId, r.groupId)}>{l.platform}</a> <span class={`side ${l.side}`}>{l.side.toUpperCase()}</span>{' '}
            <span class="num">{cents(l.price)}</span> × <span class="num">{size(l.size)}</span>
            {l.url ? (
              <a class="ext" href={l.url} target="_blank" rel="noopener noreferrer" aria-label={`open on ${l.platform}`}>
                ↗
              </a>
            ) : null}
          </div>
        ))}
      </td>
      <td class="num roi">{pct(r.roi)}</td>
      <td class="num">{size(r.size)}</td>
      <td class="num">
        <Age iso={r.detectedAt} />
      </td>
    </tr>
  );
}, sameRow);

/** Whether a row would draw the same: a group's message brings new objects for rows that did not change. */
function sameRow(a: { r: Row }, b: { r: Row }): boolean {
  const x = a.r;
  const y = b.r;
  if (x === y) return true;
  if (x.id !== y.id || x.roi !== y.roi || x.size !== y.size || x.title !== y.title || x.closed?.reason !== y.closed?.reason || x.legs.length !== y.legs.length)
    return false;
  return x.legs.every((l, i) => {
    const m = y.legs[i]!;
    return l.platform === m.platform && l.marketId === m.marketId && l.side === m.side && l.price === m.price && l.size === m.size && l.url === m.url;
  });
}

/** An opportunity's age, ticking each second on its own (so a tick redraws the age cells, not the rows). */
function Age({ iso }: { iso: string | null }) {
  const now = useNow();
  return <>{age(iso, now)}</>;
}

function Filters({ filter, categories, onChange }: { filter: Filter; categories: readonly string[]; onChange: (f: Filter) => void }) {
  const venues = useVenues();
  return (
    <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
      <label>
        Kind
        <select value={filter.kind} onChange={(e) => onChange({ ...filter, kind: e.currentTarget.value as Filter['kind'] })}>
          <option value="all">arb and EV</option>
          <option value="arb">arb</option>
          <option value="ev">EV</option>
        </select>
      </label>
      <label>
        Venue
        <select name="venue" value={filter.venue} onChange={(e) => onChange({ ...filter, venue: e.currentTarget.value })}>
          <option value="">all venues</option>
          {venues.map((v) => (
            <option value={v} key={v}>
              {v}
            </option>
          ))}
        </select>
      </label>
      <label>
        Category
        <select name="category" value={filter.category} onChange={(e) => onChange({ ...filter, category: e.currentTarget.value })}>
          <option value="">all categories</option>
          {categories.map((c) => (
            <option value={c} key={c}>
              {c}
            </option>
          ))}
        </select>
      </label>
      <label>
        Min ROI %
        <input
          name="min-roi"
          type="number"
          inputMode="decimal"
          min="0"
          step="0.5"
          value={filter.minRoi}
          onInput={(e) => {
            const v = Number(e.currentTarget.value);
            onChange({ ...filter, minRoi: Number.isFinite(v) && v >= 0 ? v : 0 });
          }}
        />
      </label>
    </form>
  );
}
