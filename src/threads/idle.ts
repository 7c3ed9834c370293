/**
 * The idle stop of a thread pool: `arm` once no job is pending; if still none is after `ms`,
 * `onIdle` stops the threads. `cancel` when a job arrives or the pool closes. The timer never keeps
 * the process alive.
 */
export function idleTimer(ms: number, busy: () => boolean, onIdle: () => void) {
  let timer: NodeJS.Timeout | null = null;
  const cancel = () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  return {
    arm(): void {
      cancel();
      timer = setTimeout(() => {
        timer = null;
        if (!busy()) onIdle();
      }, ms);
      timer.unref();
    },
    cancel,
  };
}
