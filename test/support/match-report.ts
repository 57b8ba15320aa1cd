/**
 * `npm run match:report`: the precision/recall report of both real pair sets (test/support/pair-report.ts),
 * per split, category and labelled relation, each pair through `crossbook match`.
 */
import { formatReport, loadSet, scoreSet, SETS, type SetName } from './pair-report.js';

for (const name of Object.keys(SETS) as SetName[]) {
  console.log(`${formatReport(`${name} (${SETS[name]})`, scoreSet(loadSet(name)))}\n`);
}
