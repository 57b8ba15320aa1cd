import type { ComponentChildren } from 'preact';

/** A column header of numbers: right-aligned over the right-aligned figures below it. */
export function NumTh({ children }: { children: ComponentChildren }) {
  return (
    <th scope="col" class="num">
      {children}
    </th>
  );
}
