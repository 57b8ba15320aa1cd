import type { CrossbookStream } from 'crossbook/client';
import { useRef, useState } from 'preact/hooks';
import { age, size } from '../format.js';
import { Frame } from '../frame.js';
import { useSession, useStream } from '../session.js';
import { usePoll } from '../usePoll.js';
import { NumTh } from '../components/NumTh.js';

interface Platform {
  readonly active_markets: number;
  readonly live_markets: number;
  readonly feed_status: string;
  readonly feed_issue: string | null;
  readonly disconnects: number;
  readonly gaps: number;
  readonly malformed_frames: number;
  readonly catalog_refreshed_at: string | null;
  readonly last_interruption: string | null;
}

interface Status {
  readonly status: string;
  readonly last_updated: string | null;
  readonly platforms: Record<string, Platform>;
  readonly persistence?: { status: string; writable: boolean; write_errors: number; last_error: string | null };
}

/** Markets per venue whose price updates are sampled for the lag. */
const SAMPLE = 15;
/** Lag samples kept per venue. */
const WINDOW = 200;

/** Per-venue feed status from /status (no key needed), and the venue lag (recv_ts − venue_ts) of live price updates. */
export function Health() {
  const { client } = useSession();
  const status = usePoll(async () => (await fetch('/api/v2/status')).json() as Promise<Status>, 2_000, []);
  const lags = useRef(new Map<string, number[]>()).current;
  const [, setTick] = useState(0);
  const frame = useRef(new Frame(() => setTick((t) => t + 1))).current;
  useStream(
    {
      onUpdate: (m) => {
        if (m.type !== 'price_update' || m.venue_ts === undefined || m.recv_ts === undefined) return;
        const l = lags.get(m.source) ?? [];
        l.push(m.recv_ts - m.venue_ts);
        if (l.length > WINDOW) l.shift();
        lags.set(m.source, l);
        frame.request();
      },
    },
    (s: CrossbookStream) => {
      // A sample of each venue's markets: their price updates carry the venue's and our receive time.
      void fetch('/api/v2/status')
        .then((r) => r.json() as Promise<Status>)
        .then((st) =>
          Promise.all(
            Object.keys(st.platforms).map(async (p) => {
              const { data } = await client.GET('/markets', { params: { query: { platform: p as never, limit: SAMPLE } } });
              return (data?.markets ?? []).map((m) => `${p}:${m.market_id}`);
            }),
          ),
        )
        .then((ids) => s.subscribe('prices', ids.flat()));
    },
    [],
  );
  const now = Date.now();
  if (!status) return <p class="empty">Loading…</p>;
  return (
    <section aria-labelledby="health-h">
      <h1 id="health-h">Health</h1>
      <p class="meta">
        Service <span class={`pill ${status.status}`}>{status.status}</span> · last update {age(status.last_updated, now)} ago · persistence{' '}
        <span class={`pill ${status.persistence?.status ?? 'unknown'}`} data-testid="persistence">
          {status.persistence?.status ?? 'unknown'}
        </span>
        {status.persistence && !status.persistence.writable ? ' (DATA_DIR not writable: serving from a temporary copy)' : ''}
        {status.persistence?.write_errors ? ` · ${status.persistence.write_errors} write errors` : ''}
      </p>
      <div class="scroll">
        <table class="health" aria-label="venue feeds">
          <thead>
            <tr>
              <th scope="col">Venue</th>
              <th scope="col">Feed</th>
              <NumTh>Lag p50</NumTh>
              <NumTh>Lag p95</NumTh>
              <NumTh>Live / all markets</NumTh>
              <NumTh>Disconnects</NumTh>
              <NumTh>Gaps</NumTh>
              <NumTh>Malformed</NumTh>
              <NumTh>Catalog age</NumTh>
            </tr>
          </thead>
          <tbody>
            {Object.entries(status.platforms).map(([venue, p]) => {
              const l = [...(lags.get(venue) ?? [])].sort((a, b) => a - b);
              return (
                <tr key={venue} data-venue={venue}>
                  <th scope="row">{venue}</th>
                  <td>
                    <span class={`pill ${p.feed_status}`}>{p.feed_status}</span>
                    {p.feed_issue ? <span class="sub"> {p.feed_issue}</span> : null}
                  </td>
                  <td class="num">{l.length ? `${quantile(l, 0.5)} ms` : '—'}</td>
                  <td class="num">{l.length ? `${quantile(l, 0.95)} ms` : '—'}</td>
                  <td class="num">
                    {size(p.live_markets)} / {size(p.active_markets)}
                  </td>
                  <td class="num">{p.disconnects}</td>
                  <td class="num">{p.gaps}</td>
                  <td class="num">{p.malformed_frames}</td>
                  <td class="num">{age(p.catalog_refreshed_at, now)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <p class="meta">
        Lag is recv_ts − venue_ts of the price updates of {SAMPLE} markets per venue, over the last {WINDOW} updates (the venue's leg; a venue that sends no
        time of its own reads 0).
      </p>
    </section>
  );
}

function quantile(sorted: readonly number[], q: number): number {
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
}
