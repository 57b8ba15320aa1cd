import { useEffect, useState } from 'preact/hooks';

/**
 * Client-side routing over real paths (`/`, `/app/market?…`, `/app/groups`, `/app/health`): the
 * server answers each with the same page, so a link can be opened in a new tab or shared (the key
 * is not in it). Same-origin link clicks become history pushes, so the key in memory survives.
 */
export function navigate(href: string): void {
  history.pushState(null, '', href);
  dispatchEvent(new PopStateEvent('popstate'));
  document.getElementById('content')?.focus();
}

export function useLocation(): URL {
  const [url, setUrl] = useState(() => new URL(location.href));
  useEffect(() => {
    const on = () => setUrl(new URL(location.href));
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  return url;
}

/** Intercepts plain left clicks on same-origin links to the dashboard's own pages. */
export function installLinkInterceptor(): void {
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest?.('a');
    if (!a || a.target || a.hasAttribute('download')) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !(url.pathname === '/' || url.pathname.startsWith('/app/'))) return;
    e.preventDefault();
    navigate(url.pathname + url.search);
  });
}
