import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Why opening crossbook.mdb is coordinated between processes: lmdb-js 3.x's `mdb_env_open`
 * (`mdb_env_open2` in its patched mdb.c) stores the transaction id of the meta page it read at open
 * into the lock file's shared "last committed transaction" (`mti_txnid`) unconditionally; upstream
 * LMDB does that only for `MDB_PREVSNAPSHOT`, under an exclusive lock. If another process commits
 * between that read and that store (the service commits a batch every few milliseconds), the shared
 * id goes back. Transactions begun after it, in any process, take their snapshot's meta page slot from
 * the stale id: a read misses commits whose promises had resolved; a write one commit back builds on
 * the older tree and overwrites a committed transaction (its records are gone from the file), two back
 * it reads pages stamped with a later id than its own and fails with `MDB_PROBLEM: mdb_page_touch no
 * parent`; the writer also segfaulted in some runs. A read-only open (`crossbook data check`, `backup`)
 * does the same. Reproduced by test/faults/concurrent-open.test.ts (3 of 3 runs failed without this).
 *
 * So no process opens the environment while another one can commit:
 * - an opener takes `crossbook.mdb-opening-lock` (created exclusively; holds its pid and a nonce), then
 *   waits until every other process that has the environment open for writing (an empty file each
 *   under `crossbook.mdb-writers-lock/`, named by its pid) has stopped writing and said so (an empty
 *   `<holder>.ack.<nonce>`), or has closed; it opens, makes its own first writes, registers as a
 *   holder and removes the lock;
 * - a holder that sees the lock of another process defers its new asynchronous writes, waits for
 *   the ones in flight to commit, acknowledges, and resumes once the lock is gone.
 *   A synchronous write before its acknowledgement is safe (the opener is still waiting for it);
 *   after it, the write waits for the lock to go (see `HolderRegistration.beforeSyncWrite`).
 * A lock or holder file of a process that no longer runs is ignored and removed, and so is a lock
 * seen with no note in it for over `UNREADABLE_LOCK_MS` (its writer died between creating and writing it).
 * On a full disk (ENOSPC) the lock cannot be written: the open goes on without it, and the empty file
 * is removed, not left to block every later open. Holder and acknowledgement files are empty (what
 * they say is in their names), so a holder registers and answers on a full disk too.
 */

/** A problem coordinating the open with other processes (the message says which process and what to do). */
export class OpenCoordinationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OpenCoordinationError';
  }
}

interface LockNote {
  readonly pid: number;
  readonly nonce: string;
}

/** How long an opener waits for the lock and for the holders' acknowledgements (ms). */
export const OPEN_WAIT_MS = 30_000;

/** A lock file seen with no readable note in it for this long (ms) was left by a process that died writing it. */
export const UNREADABLE_LOCK_MS = 2_000;

const lockPath = (file: string): string => `${file}-opening-lock`;
const holdersDir = (file: string): string => `${file}-writers-lock`;
/** A holder's acknowledgement of the lock with `nonce`: an empty file (a full disk takes it too). */
const ackName = (holder: string, nonce: string): string => `${holder}.ack.${nonce}`;

/**
 * Blocks the thread for `ms` (the opener is synchronous, as LMDB's open is). The waits here are
 * process coordination on a monotonic timer, not engine time, so they do not use the Clock.
 */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Whether a process with this pid runs (EPERM: it runs as another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readLock(file: string): LockNote | undefined {
  try {
    const n = JSON.parse(readFileSync(lockPath(file), 'utf8')) as LockNote;
    return typeof n.pid === 'number' && typeof n.nonce === 'string' ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Creates the lock exclusively with `note` in it: 'taken', 'exists' (another's), 'unwritable' (a
 * read-only directory) or 'full' (ENOSPC, with no empty file left behind). Throws on anything else.
 */
function createLock(lock: string, note: string): 'taken' | 'exists' | 'unwritable' | 'full' {
  let fd: number;
  try {
    fd = openSync(lock, 'wx');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return 'exists';
    if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') return 'unwritable';
    if (code === 'ENOSPC') return 'full';
    throw e;
  }
  try {
    writeSync(fd, note);
    return 'taken';
  } catch (e) {
    // This process created the file: an empty lock would hold off every later open for good.
    unlinkQuiet(lock);
    if ((e as NodeJS.ErrnoException).code === 'ENOSPC') return 'full';
    throw e;
  } finally {
    closeSync(fd);
  }
}

/** The inode of `lock`, undefined when it is gone. */
function inode(lock: string): number | undefined {
  try {
    return statSync(lock).ino;
  } catch {
    return undefined;
  }
}

function unlinkQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/** The lock of an opener, held from before LMDB's open until the opener's first writes are done. */
export interface OpeningLock {
  release(): void;
}

/**
 * Takes the opening lock of `file` and waits until no other process can commit to it (see the
 * module comment). Throws OpenCoordinationError, holding nothing, when that does not happen within
 * `waitMs`.
 */
export function acquireOpening(file: string, waitMs = OPEN_WAIT_MS): OpeningLock {
  const deadline = performance.now() + waitMs;
  const nonce = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const lock = lockPath(file);
  mkdirSync(dirname(file), { recursive: true });
  // An unreadable lock seen on this inode since this moment (performance.now).
  let unreadable: { ino: number; since: number } | undefined;
  for (;;) {
    const taken = createLock(lock, JSON.stringify({ pid: process.pid, nonce } satisfies LockNote));
    if (taken === 'taken') break;
    // A directory this process cannot write (a read-only check of a read-only mount) cannot take
    // a writer's holder file either: there is nobody to coordinate with through it.
    // A full disk: no other process can commit either (each one's DiskGuard pauses its writes
    // before LMDB would see ENOSPC), so the open goes on without the lock, as a start on a full
    // disk always did (it then serves read-only until space returns).
    if (taken === 'unwritable' || taken === 'full') return { release: () => undefined };
    const other = readLock(file);
    // Left by a process that died while opening: nothing of it runs any more. A lock naming this
    // process is one too: the opens of one process are synchronous and never overlap, so it was
    // left by an earlier process with the same pid (a container's service is pid 1 every start).
    if (other !== undefined && (other.pid === process.pid || !alive(other.pid))) {
      if (readLock(file)?.nonce === other.nonce) unlinkQuiet(lock);
      continue;
    }
    // No note in it: being written this moment, or left by a process that died between creating and
    // writing it (or by a full disk before this was handled), which nothing else would ever remove.
    if (other === undefined) {
      const ino = inode(lock);
      if (ino === undefined) continue; // gone meanwhile
      if (unreadable?.ino !== ino) unreadable = { ino, since: performance.now() };
      else if (performance.now() - unreadable.since > UNREADABLE_LOCK_MS) {
        if (inode(lock) === ino && readLock(file) === undefined) unlinkQuiet(lock);
        unreadable = undefined;
        continue;
      }
    } else unreadable = undefined;
    if (performance.now() > deadline)
      throw new OpenCoordinationError(
        `${file}: process ${other?.pid ?? '?'} has been opening it for over ${waitMs} ms (${lock}); try again, or remove that file if no crossbook process runs`,
      );
    pause(5);
  }
  const release = (): void => {
    if (readLock(file)?.nonce === nonce) unlinkQuiet(lock);
  };
  try {
    waitForHolders(file, nonce, deadline, waitMs);
  } catch (e) {
    release();
    throw e;
  }
  return { release };
}

/** Waits until every other live holder of `file` has acknowledged `nonce` or closed. */
function waitForHolders(file: string, nonce: string, deadline: number, waitMs: number): void {
  const dir = holdersDir(file);
  for (;;) {
    let waiting: number | undefined;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return; // no holder ever registered
    }
    for (const name of names) {
      if (name.includes('.ack')) continue;
      const pid = Number(name.slice(0, name.indexOf('-')));
      if (pid === process.pid) continue; // lmdb-js shares one environment per process: no second open
      if (!alive(pid)) {
        unlinkQuiet(join(dir, name));
        for (const n of names) if (n.startsWith(`${name}.ack`)) unlinkQuiet(join(dir, n));
        continue;
      }
      if (!existsSync(join(dir, ackName(name, nonce))) && existsSync(join(dir, name))) waiting = pid;
    }
    if (waiting === undefined) return;
    if (performance.now() > deadline)
      throw new OpenCoordinationError(
        `${file}: process ${waiting} has it open and did not pause its writes within ${waitMs} ms, so it cannot be opened safely now (LMDB would lose or refuse commits); nothing was opened or written, try again`,
      );
    pause(5);
  }
}

/** The pids of other live processes registered as writers of `file` (they have it open). */
export function otherHolders(file: string): number[] {
  let names: string[];
  try {
    names = readdirSync(holdersDir(file));
  } catch {
    return [];
  }
  const pids = names.filter((n) => !n.includes('.ack')).map((n) => Number(n.slice(0, n.indexOf('-'))));
  return [...new Set(pids.filter((pid) => pid !== process.pid && alive(pid)))];
}

/** What a holder's write gate does for the coordination (DiskGuard implements it). */
export interface HoldableGate {
  /** Defers new asynchronous writes; resolves once those already issued are committed. */
  hold(): Promise<void>;
  /** Lets deferred and new writes go. */
  release(): void;
}

let holders = 0;

/**
 * This process's registration as a holder of `file` (open for writing): answers other processes'
 * opening locks through `gate`. `close()` after the environment is closed.
 */
export class HolderRegistration {
  private readonly name: string;
  private readonly dir: string;
  private readonly timer: NodeJS.Timeout;
  /** The nonce of the foreign lock being answered (held until that lock is gone), if any. */
  private answering: string | undefined;
  /** The nonce acknowledged last. */
  private acked: string | undefined;
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly gate: HoldableGate,
    // A stat of the lock file every 25 ms. Not fs.watch: a watch on DATA_DIR also reports every
    // page LMDB writes to crossbook.mdb, a callback per write on the service's main thread.
    pollMs = 25,
  ) {
    this.dir = holdersDir(file);
    this.name = `${process.pid}-${++holders}`;
    mkdirSync(this.dir, { recursive: true });
    // Empty (its name says the pid): creating it needs no data block, so a full disk takes it too.
    writeFileSync(join(this.dir, this.name), '');
    this.timer = setInterval(() => this.check(), pollMs);
    this.timer.unref();
  }

  /** Answers a foreign opening lock, or ends the hold once it is gone. */
  check(): void {
    if (this.closed) return;
    const lock = this.answering === undefined && !existsSync(lockPath(this.file)) ? undefined : readLock(this.file);
    const foreign = lock !== undefined && lock.pid !== process.pid && alive(lock.pid) ? lock : undefined;
    if (foreign === undefined) {
      if (this.answering !== undefined) {
        this.answering = undefined;
        this.timer.unref();
        this.gate.release();
      }
      return;
    }
    if (this.answering === foreign.nonce) return;
    this.answering = foreign.nonce;
    // Deferred writes hold no handle of their own: without this one a process that only waits for
    // them (a CLI command) would end, its writes never made.
    this.timer.ref();
    void this.gate.hold().then(
      () => this.ack(foreign.nonce),
      () => this.ack(foreign.nonce),
    );
  }

  private ack(nonce: string): void {
    if (this.closed || this.answering !== nonce) return;
    const previous = this.acked;
    try {
      writeFileSync(join(this.dir, ackName(this.name, nonce)), '');
    } catch {
      // Not written (the directory went away or read-only): the opener waits out its bound and says
      // which process did not answer; this process keeps its writes deferred until the lock goes.
      return;
    }
    this.acked = nonce;
    if (previous !== undefined && previous !== nonce) unlinkQuiet(join(this.dir, ackName(this.name, previous)));
  }

  /**
   * Before a synchronous write: when this process has acknowledged another's opening lock, the
   * write must wait until that open is done (bounded; then it throws and nothing is written).
   * Before the acknowledgement it is safe: the opener is still waiting.
   */
  beforeSyncWrite(waitMs = OPEN_WAIT_MS): void {
    if (this.answering === undefined) return; // no open acknowledged: nothing to wait for
    const deadline = performance.now() + waitMs;
    for (;;) {
      const lock = readLock(this.file);
      if (lock === undefined || lock.nonce !== this.acked || !alive(lock.pid)) return;
      if (performance.now() > deadline)
        throw new OpenCoordinationError(`${this.file}: process ${lock.pid} is still opening it after ${waitMs} ms; nothing was written, try again`);
      pause(2);
    }
  }

  /** Unregisters (after the environment is closed): openers stop waiting for this process. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    unlinkQuiet(join(this.dir, this.name));
    if (this.acked !== undefined) unlinkQuiet(join(this.dir, ackName(this.name, this.acked)));
    if (this.answering !== undefined) this.gate.release();
  }
}

/** Opens `file` through `open` while no other process can commit to it (for read-only opens: checks, copies). */
export function openAlone<T>(file: string, open: () => T, waitMs = OPEN_WAIT_MS): T {
  const lock = acquireOpening(file, waitMs);
  try {
    return open();
  } finally {
    lock.release();
  }
}
