import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { checkKey, keyFromFragment, remember, rememberedKey } from './key.js';
import { Board } from './pages/Board.js';
import { Groups } from './pages/Groups.js';
import { Health } from './pages/Health.js';
import { Market } from './pages/Market.js';
import { Replay } from './pages/Replay.js';
import { installLinkInterceptor, useLocation } from './router.js';
import { session, SessionContext, type Session } from './session.js';
import './style.css';

const base = location.origin;

function App() {
  const [initial] = useState(() => keyFromFragment() ?? rememberedKey());
  const [s, setS] = useState<Session | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [checking, setChecking] = useState(initial !== undefined);
  const use = async (key: string, keep: boolean | undefined) => {
    setChecking(true);
    const why = await checkKey(base, key);
    setChecking(false);
    if (why) {
      setError(why);
      if (keep === undefined && rememberedKey() === key) remember(undefined); // a remembered key that no longer works
      return;
    }
    if (keep !== undefined) remember(keep ? key : undefined);
    setError(undefined);
    setS(session(base, key));
  };
  useEffect(() => {
    if (initial) void use(initial, undefined);
  }, []);
  if (!s) return <KeyForm error={error} checking={checking} onKey={(k, keep) => void use(k, keep)} />;
  return (
    <SessionContext.Provider value={s}>
      <Shell
        onForget={() => {
          remember(undefined);
          setS(undefined);
        }}
      />
    </SessionContext.Provider>
  );
}

function Shell({ onForget }: { onForget: () => void }) {
  const url = useLocation();
  const path = url.pathname;
  const at = (p: string) => (path === p || (p === '/' && path === '/app/board') ? 'page' : undefined);
  return (
    <>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <header>
        <a class="brand" href="/">
          crossbook
        </a>
        <nav aria-label="pages">
          <a href="/" aria-current={at('/')}>
            Board
          </a>
          <a href="/app/groups" aria-current={at('/app/groups')}>
            Match groups
          </a>
          <a href="/app/health" aria-current={at('/app/health')}>
            Health
          </a>
          <a href="/app/replay" aria-current={at('/app/replay')}>
            Replay
          </a>
        </nav>
        <button type="button" class="link" onClick={onForget}>
          Forget key
        </button>
      </header>
      <main id="content" tabIndex={-1}>
        <Page url={url} />
      </main>
    </>
  );
}

function Page({ url }: { url: URL }) {
  const q = url.searchParams;
  const group = q.get('group') ?? q.get('id');
  switch (url.pathname) {
    case '/':
    case '/app/board':
      return <Board />;
    case '/app/market': {
      const platform = q.get('platform');
      const id = q.get('id');
      if (!platform || !id) return <p class="empty error">A market page needs ?platform=…&amp;id=…</p>;
      const g = q.get('group');
      return <Market key={`${platform}:${id}`} platform={platform} id={id} group={g !== null && /^\d+$/.test(g) ? Number(g) : undefined} />;
    }
    case '/app/groups':
      return <Groups q={q.get('q') ?? ''} id={group !== null && /^\d+$/.test(group) ? Number(group) : undefined} />;
    case '/app/health':
      return <Health />;
    case '/app/replay':
      return <Replay />;
    default:
      return <p class="empty error">No page at {url.pathname}.</p>;
  }
}

function KeyForm({ error, checking, onKey }: { error: string | undefined; checking: boolean; onKey: (key: string, keep: boolean) => void }) {
  const [key, setKey] = useState('');
  const [keep, setKeep] = useState(false);
  return (
    <main id="content" class="login">
      <h1>crossbook</h1>
      <p>Cross-venue prices, books and arbitrage. Enter an API key (it stays in this tab unless you ask to remember it).</p>
      {error ? (
        <p class="error" role="alert" data-testid="key-error">
          {error}
        </p>
      ) : null}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          onKey(key.trim(), keep);
        }}
      >
        <label>
          API key
          <input name="key" type="password" autoComplete="off" required value={key} placeholder="pmx_…" onInput={(e) => setKey(e.currentTarget.value)} />
        </label>
        <label class="check">
          <input name="remember" type="checkbox" checked={keep} onChange={(e) => setKeep(e.currentTarget.checked)} /> Remember on this device (localStorage)
        </label>
        <button type="submit" disabled={checking}>
          {checking ? 'Checking…' : 'Open dashboard'}
        </button>
      </form>
      <p class="meta">
        Scripts can open <code>/#key=pmx_…</code>: the fragment never reaches a server, and the page removes it from the address bar.
      </p>
    </main>
  );
}

installLinkInterceptor();
render(<App />, document.getElementById('app')!);
