/**
 * The API client the benchmarks provision with: a JSON call with the bench key, and a wait for a
 * queued task (domain, mailbox, alias) to complete, polled every 20 ms for up to a minute.
 */
export function benchApi(httpPort: number, key: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${httpPort}/api${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    return (await res.json()) as any;
  };
  const task = async (poll: string, started: { task_id: number }) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await call('GET', `${poll}?task_id=${started.task_id}`);
      if (!['queued', 'running'].includes(r.status)) { if (r.status !== 'completed') throw new Error(`${poll}: ${JSON.stringify(r)}`); return; }
      if (Date.now() > deadline) throw new Error(`${poll}: deadline`);
      await new Promise((res) => setTimeout(res, 20));
    }
  };
  return { call, task };
}
