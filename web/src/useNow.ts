import { useEffect, useState } from 'preact/hooks';

type Listener = (now: number) => void;
const listeners = new Set<Listener>();
let timer: ReturnType<typeof setInterval> | undefined;

/** The time, once a second, from one timer shared by every component that shows an age. */
export function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    listeners.add(setNow);
    timer ??= setInterval(() => {
      const n = Date.now();
      for (const l of listeners) l(n);
    }, 1000);
    return () => {
      listeners.delete(setNow);
      if (listeners.size === 0 && timer !== undefined) {
        clearInterval(timer);
        timer = undefined;
      }
    };
  }, []);
  return now;
}
