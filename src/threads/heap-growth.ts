import { setFlagsFromString } from 'node:v8';

/**
 * How far (in percent) V8 lets an old generation grow past what survived its last full GC.
 *
 * Our worker threads have heap limits (`resourceLimits`, a few hundred MB, so one hostile message
 * can only take down its thread). V8 derives its growing factor from that limit: under 2 GB it is
 * 1.3 to 2, so a parser thread whose old generation holds ~15 MB of modules ran a full mark-compact
 * every few MB of promoted objects (106 of them in one SMTP benchmark run, against 4 without the
 * limit). Measured on the parser alone: ~30 % more CPU per message than the same thread without the
 * limit. A fixed factor of 2 keeps the limits and brings the full GCs down to a few; the price is
 * an old generation up to twice its live size between collections (measured: RSS +0 to 25 MB).
 */
export const HEAP_GROWING_PERCENT = 100;

/**
 * Sets the growing factor for every isolate of the process, the worker threads started after this
 * call included. V8 reads the flag at each collection; a Node version that ignores it only loses
 * the tuning.
 */
export function tuneHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
