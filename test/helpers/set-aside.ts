import type { SetAsideQueueName } from '../../src/set-aside/queue.js';
import type { TestClient } from './app.js';
import { onPostgres } from './pg.js';
import { runCli } from './process.js';

/**
 * An operator's faces of one queue's set-aside rows on a test server: the admin API, the CLI run
 * beside the server on its database, and the queue's gauge.
 */
export async function setAsideOperator(app: TestClient, queue: SetAsideQueueName, gauge: string) {
  const admin = await app.keyFor({ admin: true });
  const env: Record<string, string> = onPostgres ? { MAILSTEAD_DATABASE_URL: app.config.databaseUrl! } : {};
  return {
    admin,
    path: `/v1/set-aside/${queue}`,
    list: async () => (await app.get(`/v1/set-aside/${queue}`, admin)).body.data as any[],
    cli: (verb: 'list' | 'retry' | 'discard', ...args: string[]) => runCli(app.dataDir, ['set-aside', verb, queue, ...args], env),
    gauge: async () => Number(new RegExp(`^${gauge} (\\d+)$`, 'm').exec(await (await fetch(`http://127.0.0.1:${app.httpPort}/metrics`)).text())?.[1]),
  };
}
