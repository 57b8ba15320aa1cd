import { createCrossbookClient, CrossbookStream, type CrossbookClient, type StreamOptions } from 'crossbook/client';
import { createContext } from 'preact';
import { useContext, useEffect, useRef } from 'preact/hooks';
import { wsConnector } from './ws-auth.js';

/** What every page reads: the service's origin, the key and the typed REST client built on it. */
export interface Session {
  readonly base: string;
  readonly key: string;
  readonly client: CrossbookClient;
}

export function session(base: string, key: string): Session {
  return { base, key, client: createCrossbookClient({ baseUrl: base, apiKey: key }) };
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('no session');
  return s;
}

type Handlers = Pick<StreamOptions, 'onUpdate' | 'onSnapshot' | 'onNotice' | 'onExpired'>;

/**
 * A WebSocket stream for the life of a page (the typed client's `CrossbookStream`: seq and epoch
 * tracked, REST resync on a gap), authenticated by `wsConnector`. `start` subscribes once it exists;
 * the handlers are read through a ref, so a page may pass fresh closures on every render.
 */
export function useStream(handlers: Handlers, start: (s: CrossbookStream) => void, deps: readonly unknown[]): void {
  const { base, key, client } = useSession();
  const h = useRef(handlers);
  h.current = handlers;
  useEffect(() => {
    const stream = new CrossbookStream({
      baseUrl: base,
      apiKey: key,
      client,
      connect: wsConnector(key),
      onUpdate: (m) => h.current.onUpdate?.(m),
      onSnapshot: (m) => h.current.onSnapshot?.(m),
      onNotice: (m) => h.current.onNotice?.(m),
      onExpired: (m) => h.current.onExpired?.(m),
    });
    start(stream);
    return () => stream.close();
  }, [base, key, ...deps]);
}
