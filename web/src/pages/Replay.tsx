import { useEffect, useRef, useState } from 'preact/hooks';
import { Ladder } from '../components/Ladder.js';
import { NumTh } from '../components/NumTh.js';
import { cents, pct, usd } from '../format.js';
import { Frame } from '../frame.js';
import { ReplayModel, type ReplayAlert } from '../replay-model.js';
import { useSession } from '../session.js';
import { wsConnector } from '../ws-auth.js';

const SPEEDS = ['1', '10', '100', 'max'] as const;
const MARKET_CHANNELS = ['prices', 'orderbook', 'arb'];
/** The alerts live sent (smart money, insiders, fades), read back from the alert store. */
const ALERT_CHANNELS = ['smart_money', 'fade_finder'];

/** A time for the form: ISO 8601 to the second. */
const isoOf = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** A time as the client typed it: ms since the epoch, or ISO 8601 (sent as it is; the server checks it). */
const timeOf = (s: string): number | string => (/^\d+$/.test(s.trim()) ? Number(s.trim()) : s.trim());

/**
 * The past over the WebSocket: pick a window, markets and a speed, and the page receives what the
 * live channels sent then (prices, books, arbitrage), from the capture log, with pause, resume,
 * seek and stop. The messages are applied as a live page applies them (replay-model.ts).
 */
export function Replay() {
  const { base, key, client } = useSession();
  const [markets, setMarkets] = useState('');
  const [from, setFrom] = useState(() => isoOf(Date.now() - 120_000));
  const [to, setTo] = useState(() => isoOf(Date.now() - 5_000));
  const [speed, setSpeed] = useState<(typeof SPEEDS)[number]>('10');
  const [alerts, setAlerts] = useState(false);
  const [seekTo, setSeekTo] = useState('');
  const [, setTick] = useState(0);
  const model = useRef(new ReplayModel()).current;
  const frame = useRef(new Frame(() => setTick((t) => t + 1))).current;
  const ws = useRef<WebSocket | undefined>(undefined);
  useEffect(() => {
    // A few markets with books to start from: the first ones of the two venues listed first.
    void Promise.all(
      ['venue_a', 'venue_b'].map(async (p) => {
        const { data } = await client.GET('/markets', { params: { query: { platform: p as never, limit: 3 } } });
        return (data?.markets ?? []).map((m) => `${p}:${m.market_id}`);
      }),
    ).then((ids) => setMarkets((cur) => cur || ids.flat().join(', ')));
    return () => ws.current?.close();
  }, []);
  const send = (m: Record<string, unknown>) => ws.current?.send(JSON.stringify({ ...m, replay_id: model.id }));
  const start = () => {
    ws.current?.close();
    model.reset();
    setTick((t) => t + 1);
    const sock = wsConnector(key)(`${base.replace(/^http/, 'ws')}/api/v2/ws`) as WebSocket;
    ws.current = sock;
    sock.addEventListener('message', (e: MessageEvent<string>) => {
      const m = JSON.parse(e.data) as Record<string, unknown>;
      if (m['type'] === 'welcome') {
        const ids = markets.split(/[\s,]+/).filter(Boolean);
        sock.send(
          JSON.stringify({
            type: 'replay',
            // The alert channels stream every alert of their feeds; market_ids are the market channels'.
            channels: alerts ? [...MARKET_CHANNELS, ...ALERT_CHANNELS] : MARKET_CHANNELS,
            market_ids: ids,
            from: timeOf(from),
            to: timeOf(to),
            speed: speed === 'max' ? 'max' : Number(speed),
          }),
        );
      } else if (model.apply(m)) frame.request();
    });
  };
  const running = model.state === 'running' || model.state === 'paused';
  const books = [...model.books.entries()].filter(([, b]) => b.bids.length > 0 || b.asks.length > 0);
  return (
    <section aria-labelledby="replay-h">
      <h1 id="replay-h">Replay</h1>
      <form
        class="replay"
        onSubmit={(e) => {
          e.preventDefault();
          start();
        }}
      >
        <label>
          Markets <input name="markets" value={markets} onInput={(e) => setMarkets(e.currentTarget.value)} placeholder="venue_a:KX…, venue_b:…" />
        </label>
        <label>
          From <input name="from" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
        </label>
        <label>
          To <input name="to" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        </label>
        <label>
          Speed{' '}
          <select name="speed" value={speed} onChange={(e) => setSpeed(e.currentTarget.value as (typeof SPEEDS)[number])}>
            {SPEEDS.map((s) => (
              <option key={s} value={s}>
                {s === 'max' ? 'as fast as it goes' : `${s}×`}
              </option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" name="alerts" checked={alerts} onChange={(e) => setAlerts(e.currentTarget.checked)} /> Alerts
        </label>
        <button type="submit">Start</button>
      </form>
      <p class="meta controls">
        <button type="button" disabled={model.state !== 'running'} onClick={() => send({ type: 'replay_pause' })}>
          Pause
        </button>{' '}
        <button type="button" disabled={model.state !== 'paused'} onClick={() => send({ type: 'replay_resume' })}>
          Resume
        </button>{' '}
        <button type="button" disabled={!running} onClick={() => send({ type: 'replay_stop' })}>
          Stop
        </button>{' '}
        <label>
          Seek to <input name="seek" value={seekTo} onInput={(e) => setSeekTo(e.currentTarget.value)} placeholder={from} />
        </label>{' '}
        <button type="button" disabled={!running || !seekTo} onClick={() => send({ type: 'replay_seek', at: timeOf(seekTo) })}>
          Seek
        </button>
      </p>
      <p class="meta" data-testid="replay-status" data-state={model.state} role="status">
        {model.state}
        {model.position !== undefined ? ` · at ${new Date(model.position).toISOString()}` : ''} · {model.messages} messages
        {model.completed ? ` · completed: ${model.completed.messages} messages sent` : ''}
      </p>
      {model.warnings.map((w, i) => (
        <p class="meta" key={i} data-testid="replay-warning">
          {w}
        </p>
      ))}
      {model.error ? (
        <p class="error" role="alert" data-testid="replay-error">
          {model.error}
        </p>
      ) : null}
      <div class="scroll">
        <table aria-label="replayed prices">
          <thead>
            <tr>
              <th scope="col">Market</th>
              <NumTh>YES bid</NumTh>
              <NumTh>YES ask</NumTh>
              <NumTh>Last</NumTh>
              <th scope="col">Received</th>
            </tr>
          </thead>
          <tbody>
            {[...model.prices.entries()].map(([k, p]) => (
              <tr key={k} data-market={k}>
                <th scope="row">
                  {p.source}:{p.market}
                </th>
                <td class="num">{cents(p.yesBid)}</td>
                <td class="num">{cents(p.yesAsk)}</td>
                <td class="num">{cents(p.last)}</td>
                <td>{p.recvTs !== undefined ? new Date(p.recvTs).toISOString().slice(11, 23) : 'snapshot'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {books[0] ? <Ladder label={`${books[0][0]} YES`} book={books[0][1]} /> : null}
      <table aria-label="replayed arbitrage">
        <thead>
          <tr>
            <th scope="col">Group</th>
            <NumTh>Opportunities</NumTh>
            <NumTh>Best ROI</NumTh>
          </tr>
        </thead>
        <tbody>
          {[...model.arbs.values()].map((a) => (
            <tr key={a.groupId} data-group={a.groupId}>
              <th scope="row">{a.title}</th>
              <td class="num">{a.count}</td>
              <td class="num">{pct(a.bestRoi)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {alerts || model.alerts.length > 0 ? <AlertTable alerts={model.alerts} /> : null}
    </section>
  );
}

/** The alerts the replay sent, newest first, as the alert feeds gave them. */
function AlertTable({ alerts }: { alerts: readonly ReplayAlert[] }) {
  return (
    <table aria-label="replayed alerts">
      <thead>
        <tr>
          <th scope="col">Raised</th>
          <th scope="col">Alert</th>
          <th scope="col">Market</th>
          <th scope="col">Trade</th>
          <NumTh>USD</NumTh>
          <th scope="col">Why</th>
        </tr>
      </thead>
      <tbody>
        {alerts.map((a) => (
          <tr key={a.id} data-alert={a.id} data-kind={a.kind}>
            <td>{Number.isFinite(a.createdAt) ? new Date(a.createdAt).toISOString().slice(11, 23) : ''}</td>
            <td>{a.kind.replace('_', ' ')}</td>
            <th scope="row">
              {a.source}:{a.title ?? a.market}
            </th>
            <td>
              {a.side} {a.outcome.toUpperCase()} at {cents(a.price)}
            </td>
            <td class="num">{usd(a.amountUsd)}</td>
            <td>{a.reason}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
