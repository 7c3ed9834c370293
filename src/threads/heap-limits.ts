import { setFlagsFromString } from 'node:v8';
import type { ResourceLimits } from 'node:worker_threads';

let cleared = false;

/**
 * A worker thread's heap limits, made to hold. `npm start` sizes the main thread's young generation
 * with `--max-semi-space-size=8`, and V8 applies that flag to every isolate it configures, over a
 * Worker's `resourceLimits.maxYoungGenerationSizeMb`: each worker thread grew two 8 MB semi-spaces
 * whatever it asked for. The flag is read only when an isolate is created, so clearing it once the
 * main thread runs leaves the main thread's young generation as launched and lets each thread
 * started afterwards take its own (docs/PERFORMANCE.md, "Allocator, GC and thread settings").
 *
 * V8 makes the young generation three semi-spaces (two, and as much again for large young
 * objects) and rounds the semi-space up to a power of two: 12 MB gives 4 MB semi-spaces.
 */
export function ownHeapLimits(limits: ResourceLimits): ResourceLimits {
  if (!cleared) {
    setFlagsFromString('--max-semi-space-size=0');
    cleared = true;
  }
  return limits;
}
