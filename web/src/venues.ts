import { useEffect, useState } from 'preact/hooks';

/** The venue slugs this service serves, from /status (no key needed), fetched once per page load. */
let venues: Promise<string[]> | undefined;

export function useVenues(): readonly string[] {
  const [list, setList] = useState<readonly string[]>([]);
  useEffect(() => {
    venues ??= fetch('/api/v2/status')
      .then((r) => r.json() as Promise<{ platforms?: Record<string, unknown> }>)
      .then((s) => Object.keys(s.platforms ?? {}))
      .catch(() => {
        venues = undefined; // try again on the next page
        return [];
      });
    let live = true;
    void venues.then((v) => live && setList(v));
    return () => {
      live = false;
    };
  }, []);
  return list;
}
