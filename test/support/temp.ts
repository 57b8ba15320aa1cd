// Temporary directories of a test file, removed after the file (test/support/temp-cleanup.ts, a setup
// file of every project, runs `removeTempDirs` after the file's own afterAll hooks). For directories
// a helper makes outside any test (a cluster's DATA_DIRs, nats-server's store) whose owner has no
// afterAll of its own to remove them; each run of the suite left them in /tmp before.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/** A fresh directory under the system's temporary directory, named `prefix` + random characters. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every directory `tempDir` made in this file (ones already gone are skipped). */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
