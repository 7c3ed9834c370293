import type { ExecutionContext } from 'ava';
import type { Clock } from '../../src/clock.js';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { startZone, type Zone } from './zone.js';

/** A record as the API shows it. */
export interface ApiRecord { type: string; name: string; value: string; priority: string; status: string }

/** A test DNS zone and an app whose DNS checks ask it, with a key of a fresh tenant. */
export async function dnsApp(t: ExecutionContext, opts: { clock?: Clock } = {}): Promise<{ zone: Zone; app: TestClient; key: string }> {
  const zone = await startZone(t);
  const app = await startTestApp(t, { env: { MAILSTEAD_DNS_SERVERS: `127.0.0.1:${zone.port}` }, clock: opts.clock });
  // The tests run each check themselves (checkNow, or cron.run by name). Left ticking, the
  // once-a-minute schedule could check a fresh domain against the zone between two steps of a test
  // whenever a minute turns, and change the statuses it asserts.
  await app.app.cron.stop();
  const key = await app.keyFor();
  return { zone, app, key };
}

/** Creates a root domain and returns its create task id and its records. */
export async function createDomain(app: TestClient, key: string, host: string): Promise<{ taskId: number; records: ApiRecord[] }> {
  const r = await app.post('/v1/create/domain', key, { Domain: host });
  if (r.status !== 200) throw new Error(`create ${host}: ${r.status} ${JSON.stringify(r.body)}`);
  const done = await app.pollTask('/v1/get/domain', key, r.body.task_id);
  if (done.body.status !== 'completed') throw new Error(`create task: ${JSON.stringify(done.body)}`);
  return { taskId: r.body.task_id, records: done.body.results.records };
}

/** Runs an on-demand check and returns its finished poll (200 completed, or 422 when inconclusive). */
export async function checkNow(app: TestClient, key: string, host: string) {
  const r = await app.post(`/v1/domains/${host}/check`, key);
  if (r.status !== 200) throw new Error(`check ${host}: ${r.status} ${JSON.stringify(r.body)}`);
  return app.pollTask('/v1/get/domain', key, r.body.task_id);
}

/** The hostname's status in GET /v1/list/domain. */
export async function listedStatus(app: TestClient, key: string, host: string): Promise<string> {
  const r = await app.get('/v1/list/domain', key);
  return r.body.results[host]?.status;
}

/** Record statuses by `TYPE name`, from a poll's results. */
export const statusByRecord = (records: ApiRecord[]) =>
  Object.fromEntries(records.map((r) => [`${r.type} ${r.name}${r.type === 'MX' ? ` ${r.priority}` : ''}`, r.status]));
