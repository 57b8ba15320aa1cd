import { useEffect, useState } from 'preact/hooks';
import { MemberTable } from '../components/Members.js';
import { cents, size } from '../format.js';
import { groupFromRecord, loadGroup, type GroupView } from '../groups.js';
import { navigate } from '../router.js';
import { useSession } from '../session.js';
import { NumTh } from '../components/NumTh.js';

/** Match groups: search (/matching-markets?q), members with confidence and reasons, the unified book. */
export function Groups({ q, id }: { q: string; id: number | undefined }) {
  const { client } = useSession();
  const [text, setText] = useState(q);
  const [result, setResult] = useState<readonly GroupView[] | string | undefined>();
  useEffect(() => {
    let live = true;
    setResult(undefined);
    const done = (r: readonly GroupView[] | string) => live && setResult(r);
    if (id !== undefined) void loadGroup(client, id).then((g) => done(typeof g === 'string' ? g : [g]));
    else if (q.length >= 3)
      void client.GET('/matching-markets', { params: { query: { q } } }).then(({ data, error }) => {
        if (error) return done((error as { error?: string }).error ?? 'search failed');
        done((data.groups as Record<string, unknown>[]).map(groupFromRecord));
      });
    else
      void client.GET('/events', { params: { query: { limit: 10 } } }).then(({ data }) => {
        const groups = (data?.events ?? []).flatMap((e) => ((e as { groups?: Record<string, unknown>[] }).groups ?? []).map(groupFromRecord));
        done(groups);
      });
    return () => {
      live = false;
    };
  }, [q, id]);
  return (
    <section aria-labelledby="groups-h">
      <h1 id="groups-h">Match groups</h1>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(`/app/groups?q=${encodeURIComponent(text.trim())}`);
        }}
      >
        <label>
          Search
          <input
            name="q"
            type="search"
            minLength={3}
            maxLength={100}
            value={text}
            placeholder="e.g. fed december"
            onInput={(e) => setText(e.currentTarget.value)}
          />
        </label>
        <button type="submit">Search</button>
      </form>
      <p class="meta">{id !== undefined ? `Group ${id}` : q.length >= 3 ? `Groups matching “${q}”` : 'Groups of the latest events'}</p>
      {result === undefined ? (
        <p class="empty">Loading…</p>
      ) : typeof result === 'string' ? (
        <p class="empty error">{result}</p>
      ) : result.length === 0 ? (
        <p class="empty">No group found.</p>
      ) : (
        result.map((g) => <GroupCard key={g.group_id} g={g} open={id !== undefined} />)
      )}
    </section>
  );
}

function GroupCard({ g, open }: { g: GroupView; open: boolean }) {
  const [book, setBook] = useState(open);
  return (
    <article class="card group" data-group={g.group_id}>
      <h2>
        <a href={`/app/groups?id=${g.group_id}`}>{g.title}</a> <span class="meta">group {g.group_id}</span>
      </h2>
      {g.event_name ? <p class="meta">{g.event_name}</p> : null}
      <MemberTable members={g.members} />
      <button type="button" aria-expanded={book} onClick={() => setBook(!book)}>
        {book ? 'Hide' : 'Show'} unified book
      </button>
      {book ? <UnifiedBook groupId={g.group_id} /> : null}
    </article>
  );
}

interface Lvl {
  readonly price: number;
  readonly size: number;
  readonly platform: string;
}

/** The group's merged depth in its YES terms (inverted members complemented by the server). */
function UnifiedBook({ groupId }: { groupId: number }) {
  const { client } = useSession();
  const [book, setBook] = useState<{ bids: Lvl[]; asks: Lvl[] } | string | undefined>();
  useEffect(() => {
    void client.GET('/unified-orderbook', { params: { query: { group_id: groupId } } }).then(({ data, error }) => {
      if (error || !data) return setBook((error as { error?: string } | undefined)?.error ?? 'no book');
      const yes = (data as unknown as { yes: { bids: Lvl[]; asks: Lvl[] } }).yes;
      setBook({ bids: yes.bids.slice(0, 10), asks: yes.asks.slice(0, 10) });
    });
  }, [groupId]);
  if (book === undefined) return <p class="empty">Loading…</p>;
  if (typeof book === 'string') return <p class="empty error">{book}</p>;
  const rows = Math.max(book.bids.length, book.asks.length);
  return (
    <table class="unified" aria-label={`unified book of group ${groupId}`}>
      <thead>
        <tr>
          <th scope="col">Bid venue</th>
          <NumTh>Size</NumTh>
          <NumTh>YES bid</NumTh>
          <NumTh>YES ask</NumTh>
          <NumTh>Size</NumTh>
          <th scope="col">Ask venue</th>
        </tr>
      </thead>
      <tbody>
        {Array.from({ length: rows }, (_, i) => {
          const b = book.bids[i];
          const a = book.asks[i];
          return (
            <tr key={i}>
              <td>{b?.platform ?? ''}</td>
              <td class="num">{b ? size(b.size) : ''}</td>
              <td class="num bid">{b ? cents(b.price) : ''}</td>
              <td class="num ask">{a ? cents(a.price) : ''}</td>
              <td class="num">{a ? size(a.size) : ''}</td>
              <td>{a?.platform ?? ''}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
