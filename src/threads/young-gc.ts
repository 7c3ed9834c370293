import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Gc = (options: { type: 'minor' | 'major' }) => void;
let gc: Gc | null | undefined;

/**
 * Runs a scavenge (a young-generation collection) of the calling thread now; false where V8's
 * collector cannot be reached. For a loop that turns over many large buffers with few other
 * allocations: V8 frees young array buffers only at a scavenge, and those come when the young
 * generation fills with objects, or when young array buffers reach about twice the semi-space
 * (16 MB on the main thread). Received mail left up to ~10 MB of spent socket buffers waiting on
 * the main thread: a 25 MB message grew the RSS by up to 20 MB, and 74 KB messages kept it 15 MB
 * higher (docs/PERFORMANCE.md, "Allocator, GC and thread settings"). `gc` is reached through
 * `--expose-gc` set at run time and a new context, without a flag on node's command line.
 */
export function collectYoungGarbage(): boolean {
  if (gc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as Gc;
    } catch {
      gc = null;
    }
  }
  if (!gc) return false;
  gc({ type: 'minor' });
  return true;
}
