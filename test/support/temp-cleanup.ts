// Setup file of every project: the temporary directories a test file made with `tempDir` are removed
// after it. Registered before the file's own hooks, so it runs after them (vitest runs after-hooks
// in reverse order): its services and child processes have stopped by then.
import { afterAll } from 'vitest';
import { removeTempDirs } from './temp.js';

afterAll(removeTempDirs);
