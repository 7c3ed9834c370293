import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * The nice value of background threads. Low enough that the thread answering SMTP and HTTP comes
 * first, not the lowest (19): against a busy normal-priority process on the same core a thread at
 * 19 gets ~1.5 % of it (CFS weights 15 and 1024), at 10 ~10 % (110), so queued mail is still
 * stored while something else keeps the machine busy. The benchmark showed no difference between
 * the two (docs/PERFORMANCE.md, "Allocator, GC and thread settings").
 */
export const BACKGROUND_NICE = 10;

/**
 * Lowers the scheduling priority of the calling thread alone (Linux: a nice value is per thread,
 * and /proc/thread-self names the thread's id). The storage thread, which stores queued mail,
 * then gives way to the thread answering SMTP and HTTP. Elsewhere, or
 * when the system refuses, the thread keeps its priority.
 */
export function lowerThreadPriority(nice: number = BACKGROUND_NICE): boolean {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
