import { openSync, closeSync, fdatasync, fdatasyncSync } from 'node:fs';

/**
 * Makes committed transactions survive a power cut without blocking the event loop.
 *
 * The connection runs with synchronous=NORMAL, so a COMMIT only writes its frames to the WAL file
 * (the OS page cache) and never fsyncs on the main thread. Code that is about to acknowledge
 * something (an HTTP 200 for a task, an inbound email, an SMTP 250) calls `flush()`, which
 * fdatasyncs the WAL on libuv's thread pool and resolves once every commit made before the call is
 * on disk. That is the guarantee of synchronous=FULL, at one fsync for all the commits that
 * arrived in the meantime. Should the WAL be checkpointed first, SQLite's checkpoint synced both
 * files itself. Commits nobody acknowledges (worker bookkeeping) are simply redone after a power
 * cut from the durable rows that caused them.
 */
export function createWalSync(walFile: string) {
  let fd: number | null = null;
  let current: Promise<void> | null = null;
  let queued: Promise<void> | null = null;

  function syncOnce(): Promise<void> {
    return new Promise((resolve, reject) => {
      try {
        fd ??= openSync(walFile, 'r');
      } catch (err) {
        // No WAL file (nothing written since the last checkpoint removed it): nothing to sync.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return resolve();
        return reject(err);
      }
      fdatasync(fd, (err) => (err ? reject(err) : resolve()));
    });
  }

  function start(): Promise<void> {
    const p: Promise<void> = syncOnce().finally(() => { if (current === p) current = null; });
    current = p;
    return p;
  }

  return {
    /** Resolves once every transaction committed before this call is on disk. */
    flush(): Promise<void> {
      if (!current) return start();
      // A sync under way may have started before the caller's commit: wait for the next one.
      queued ??= current.catch(() => undefined).then(() => { queued = null; return start(); });
      return queued;
    },
    close() {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}

/**
 * The blocking form, for a thread that commits and then answers (the storage thread's group
 * commits): one fdatasync right after the commit, in the same thread, costs less than the two
 * cross-thread hops of asking the main thread to sync through libuv's pool.
 */
export function walSyncer(walFile: string) {
  let fd: number | null = null;
  return {
    /** Every transaction this thread committed is on disk when it returns. */
    sync(): void {
      fd ??= openSync(walFile, 'r');
      fdatasyncSync(fd);
    },
    /** Closes the file: descriptors belong to the process and outlive the thread that opened them. */
    close(): void {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}
