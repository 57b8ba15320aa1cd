import type { Profile } from './profiles.js';
import { runScale } from './scale.js';
import { writeScaleReport, writeScaleResults } from './scale-report.js';

/** The sizes of the study when `--markets` gives none. */
export const DEFAULT_SIZES: readonly number[] = [1_000, 10_000, 100_000, 1_000_000];

/** `crossbook bench --profile scale [--markets 1000,10000,…]`: runs the study and writes its reports. */
export async function runScaleCommand(o: {
  readonly profile: Profile;
  readonly sizes: readonly number[];
  readonly outDir: string;
  readonly maxMinutes: number;
  readonly results: boolean;
  readonly command: string;
  readonly log: (line: string) => void;
}): Promise<void> {
  const sizes = o.sizes.length ? [...o.sizes].sort((a, b) => a - b) : DEFAULT_SIZES;
  const report = await runScale({ sizes, profile: o.profile, componentsAt: undefined, liveTimeoutSec: 900, maxMinutes: o.maxMinutes, log: o.log }, o.command);
  const files = writeScaleReport(o.outDir, report);
  if (o.results && report.points.length > 0) o.log(`results: ${writeScaleResults(report)}`);
  o.log(`report: ${files.html} (data: ${files.json})`);
}
