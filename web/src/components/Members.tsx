import { useEffect, useState } from 'preact/hooks';
import { cents, marketHref } from '../format.js';
import { groupOfMarket, type GroupView, type Member } from '../groups.js';
import { useSession } from '../session.js';
import { NumTh } from './NumTh.js';

/** The match group of a market, loaded and refreshed every 5 s, every member's price side by side. */
export function Members({ platform, id, group }: { platform: string; id: string; group: number | undefined }) {
  const { client } = useSession();
  const [view, setView] = useState<GroupView | string | undefined>();
  useEffect(() => {
    let live = true;
    const load = () =>
      void groupOfMarket(client, platform, id, group).then(
        (v) => live && setView(v),
        () => undefined,
      );
    load();
    const t = setInterval(load, 5_000);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, [platform, id, group]);
  if (view === undefined) return <p class="empty">Loading…</p>;
  if (typeof view === 'string') return <p class="empty">{view}</p>;
  return (
    <>
      <p class="meta">
        <a href={`/app/groups?id=${view.group_id}`}>group {view.group_id}</a> · {view.title}
      </p>
      <MemberTable members={view.members} current={`${platform}:${id}`} />
    </>
  );
}

/** Members of a group: venue, orientation, confidence and reasons (operator overrides marked), prices. */
export function MemberTable({ members, current }: { members: readonly Member[]; current?: string }) {
  return (
    <div class="scroll">
      <table class="members" aria-label="group members">
        <thead>
          <tr>
            <th scope="col">Venue</th>
            <th scope="col">Market</th>
            <th scope="col">Orientation</th>
            <NumTh>Conf.</NumTh>
            <th scope="col">Reasons</th>
            <NumTh>YES bid</NumTh>
            <NumTh>YES ask</NumTh>
            <NumTh>NO bid</NumTh>
            <NumTh>NO ask</NumTh>
            <NumTh>Last</NumTh>
          </tr>
        </thead>
        <tbody>
          {members.map((m) => {
            const key = `${m.platform}:${m.market_id}`;
            const override = m.reasons.includes('override');
            return (
              <tr key={key} data-member={key} aria-current={key === current ? 'true' : undefined} class={key === current ? 'current' : undefined}>
                <td>{m.platform}</td>
                <td class="title">
                  <a href={marketHref(m.platform, m.market_id)}>{m.title}</a>
                  {m.url ? (
                    <a class="ext" href={m.url} target="_blank" rel="noopener noreferrer" aria-label={`open on ${m.platform}`}>
                      ↗
                    </a>
                  ) : null}
                </td>
                <td>
                  {m.inverted ? (
                    <span class="tag inverted" title="this market's YES is the group's NO">
                      inverted
                    </span>
                  ) : (
                    'same'
                  )}
                </td>
                <td class="num">{m.confidence === null ? '—' : m.confidence.toFixed(2)}</td>
                <td>
                  {override ? <span class="tag override">operator override</span> : null} {m.reasons.filter((r) => r !== 'override').join(', ')}
                </td>
                <td class="num">{cents(m.yes_bid)}</td>
                <td class="num">{cents(m.yes_ask)}</td>
                <td class="num">{cents(m.no_bid)}</td>
                <td class="num">{cents(m.no_ask)}</td>
                <td class="num">{cents(m.last_price)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
