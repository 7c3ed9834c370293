import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The nice value of background threads: the lowest priority, run when nothing else wants the CPU. */
export const BACKGROUND_NICE = 19;

/**
 * Lowers the scheduling priority of the calling thread alone (Linux: a nice value is per thread,
 * and /proc/thread-self names the thread's id). Background threads that store and parse queued
 * mail then use only the CPU that the thread answering SMTP and HTTP leaves idle. Elsewhere, or
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
