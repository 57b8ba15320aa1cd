import { useEffect, useState } from 'preact/hooks';

/** A value fetched now and again every `ms` while the page shows it (undefined until the first answer). */
export function usePoll<T>(load: () => Promise<T>, ms: number, deps: readonly unknown[]): T | undefined {
  const [value, setValue] = useState<T | undefined>(undefined);
  useEffect(() => {
    let live = true;
    setValue(undefined);
    const run = () =>
      load().then(
        (v) => live && setValue(v),
        () => undefined, // keep the last value; the next poll tries again
      );
    void run();
    const t = setInterval(() => void run(), ms);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, deps);
  return value;
}
