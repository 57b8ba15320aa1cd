import type { Schemas } from 'crossbook/client';
import { useEffect, useState } from 'preact/hooks';
import { Candles, type Candle } from '../components/Candles.js';
import { Ladder, type Book, type Level } from '../components/Ladder.js';
import { Members } from '../components/Members.js';
import { cents, size } from '../format.js';
import { useSession, useStream } from '../session.js';
import { usePoll } from '../usePoll.js';
import { NumTh } from '../components/NumTh.js';

const INTERVALS = ['1m', '5m', '15m', '1h', '1d'] as const;
type Interval = (typeof INTERVALS)[number];
const EMPTY: Book = { bids: [], asks: [] };

interface Books {
  readonly yes: Book;
  readonly no: Book;
  readonly title?: string;
}

/** One market: its book as a ladder, candles, the trade tape and its match group. */
export function Market({ platform, id, group }: { platform: string; id: string; group: number | undefined }) {
  const { client } = useSession();
  const [books, setBooks] = useState<Books | undefined>();
  const [bookError, setBookError] = useState<string | undefined>();
  const [quote, setQuote] = useState<Schemas['WsPriceUpdate'] | undefined>();
  const [title, setTitle] = useState<string>(id);

  useEffect(() => {
    setBooks(undefined);
    setBookError(undefined);
    void client.GET('/orderbook', { params: { query: { platform: platform as never, market_id: id } } }).then(({ data, error }) => {
      if (error) return setBookError((error as { error?: string }).error ?? 'no order book');
      const toLevels = (ls: readonly { price: number; size: number }[]): Level[] => ls.map((x) => [x.price, x.size]);
      setBooks({ yes: { bids: toLevels(data.yes.bids), asks: toLevels(data.yes.asks) }, no: { bids: toLevels(data.no.bids), asks: toLevels(data.no.asks) } });
      if (data.title) setTitle(data.title);
    });
    void client.GET('/markets', { params: { query: { platform: platform as never, q: id, limit: 5, status: 'all' } } }).then(({ data }) => {
      const m = data?.markets.find((x) => x.market_id === id);
      if (m?.title) setTitle(m.title);
    });
  }, [platform, id]);

  useStream(
    {
      onUpdate: (m) => {
        if (m.type === 'orderbook_update' && m.market_id === id) setBooks({ yes: m.yes, no: m.no });
        if (m.type === 'price_update' && m.market_id === id) setQuote(m);
      },
    },
    (s) => {
      s.subscribe('orderbook', [`${platform}:${id}`]);
      s.subscribe('prices', [`${platform}:${id}`]);
    },
    [platform, id],
  );

  return (
    <section aria-labelledby="market-h">
      <p class="crumb">
        {platform} · <code>{id}</code>
      </p>
      <h1 id="market-h">{title}</h1>
      <p class="quote" data-testid="quote">
        YES bid <b class="num">{cents(quote?.yes_bid)}</b> · ask <b class="num">{cents(quote?.yes_ask)}</b> · last <b class="num">{cents(quote?.last_price)}</b>{' '}
        · volume <b class="num">{size(quote?.volume)}</b>
      </p>
      <div class="market-grid">
        <div class="card">
          <h2>Order book (cents)</h2>
          {bookError ? (
            <p class="empty">{bookError}</p>
          ) : (
            <div class="ladders" data-testid="ladder" data-ready={books ? 'true' : 'false'}>
              <Ladder label="YES" book={books?.yes ?? EMPTY} />
              <Ladder label="NO" book={books?.no ?? EMPTY} />
            </div>
          )}
        </div>
        <div class="card wide">
          <Chart platform={platform} id={id} />
        </div>
        <div class="card">
          <Tape platform={platform} id={id} />
        </div>
        <div class="card wide">
          <h2>Match group</h2>
          <Members platform={platform} id={id} group={group} />
        </div>
      </div>
    </section>
  );
}

function Chart({ platform, id }: { platform: string; id: string }) {
  const { client } = useSession();
  const [interval, setIv] = useState<Interval>('1m');
  const candles = usePoll(
    async () => {
      const { data, error } = await client.GET('/prices/history', { params: { query: { platform: platform as never, market_id: id, interval } } });
      if (error) return (error as { error?: string }).error ?? 'no price history';
      return data.candles as Candle[];
    },
    10_000,
    [platform, id, interval],
  );
  return (
    <>
      <div class="row">
        <h2>Price (cents)</h2>
        <div class="seg" role="radiogroup" aria-label="candle interval">
          {INTERVALS.map((i) => (
            <button type="button" role="radio" aria-checked={i === interval} class={i === interval ? 'on' : undefined} onClick={() => setIv(i)} key={i}>
              {i}
            </button>
          ))}
        </div>
      </div>
      {candles === undefined ? (
        <p class="empty">Loading candles…</p>
      ) : typeof candles === 'string' ? (
        <p class="empty error">{candles}</p>
      ) : candles.length ? (
        <Candles candles={candles} label={`${interval} candles of ${id}`} />
      ) : (
        <p class="empty">No candles yet for this interval.</p>
      )}
    </>
  );
}

function Tape({ platform, id }: { platform: string; id: string }) {
  const { client } = useSession();
  const trades = usePoll(
    async () => {
      const { data, error } = await client.GET('/trades', { params: { query: { platform: platform as never, market_id: id, limit: 30 } } });
      if (error) return (error as { error?: string }).error ?? 'no trades';
      return data.trades;
    },
    5_000,
    [platform, id],
  );
  return (
    <>
      <h2>Trades</h2>
      {typeof trades === 'string' ? (
        <p class="empty">The trade feed covers venue_a and venue_b only ({trades}).</p>
      ) : !trades?.length ? (
        <p class="empty">{trades ? 'No trades yet.' : 'Loading…'}</p>
      ) : (
        <div class="scroll tape">
          <table aria-label="trade tape">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Taker</th>
                <NumTh>Price</NumTh>
                <NumTh>Shares</NumTh>
              </tr>
            </thead>
            <tbody>
              {trades.map((t) => (
                <tr key={t.trade_id}>
                  <td class="num">{t.executed_at.slice(11, 19)}</td>
                  <td class={`side ${t.taker_side}`}>{t.taker_side}</td>
                  <td class="num">{cents(t.price)}</td>
                  <td class="num">{size(t.shares)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
