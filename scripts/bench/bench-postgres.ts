/**
 * PostgreSQL for the email benchmarks' `--database=postgres|both`: a durable cluster on this
 * machine (test/helpers/pg.ts with fsync, synchronous commit and full page writes on, 128 MB of
 * shared buffers, run as the `postgres` OS user), a fresh database on it per run, and the CPU its
 * processes use, so a figure of PostgreSQL mode counts the database's share of the two cores too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { databaseUrl, stopTestCluster, testCluster } from '../../test/helpers/pg.js';

/** Which databases a benchmark runs against: `both` runs SQLite mode, then PostgreSQL mode. */
export type BenchDatabase = 'sqlite' | 'postgres' | 'both';

/** The `--database` option's value, checked (default sqlite, as before the option existed). */
export function databaseOption(value: string | undefined): BenchDatabase {
  const v = value ?? 'sqlite';
  if (v !== 'sqlite' && v !== 'postgres' && v !== 'both') throw new Error('--database is sqlite, postgres or both');
  return v;
}

/** The modes `--database` asks for, in the order they run. */
export const modesOf = (d: BenchDatabase): Array<'sqlite' | 'postgres'> => (d === 'both' ? ['sqlite', 'postgres'] : [d]);

/** A database of the durable cluster for one run. */
export interface BenchPostgres {
  /** MAILSTEAD_DATABASE_URL for the server, the CLI and direct connections (a unix socket). */
  url: string;
  /** CPU milliseconds (user + system) the cluster's processes have used so far (Linux; null elsewhere). */
  cpuMs(): number | null;
  /** The database's size on disk in bytes (tables, indexes, TOAST). */
  size(): Promise<number>;
  /** Drops the database (ending what is left connected). */
  drop(): Promise<void>;
}

let seq = 0;

/** A new, empty database on the durable cluster, which starts on first use and stops at exit. */
export async function benchPostgres(): Promise<BenchPostgres> {
  const cluster = await testCluster({ durable: true });
  const name = `bench_${process.pid}_${++seq}`;
  await cluster.admin.query(`CREATE DATABASE ${name}`);
  const postmaster = cluster.server.pid!;
  return {
    url: databaseUrl(cluster, name),
    cpuMs: () => clusterCpuMs(postmaster),
    size: async () => Number((await cluster.admin.query<{ n: string }>('SELECT pg_database_size($1) AS n', [name])).rows[0].n),
    async drop() { await cluster.admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); },
  };
}

/** Stops the durable cluster now (otherwise it stops when this process exits). */
export const stopBenchPostgres = (): void => stopTestCluster();

/**
 * The postmaster's CPU and that of its children (backends, WAL writer, checkpointer...), from
 * /proc: a child's time only reaches its parent's counters when it exits, so each is read live.
 * A backend that ended between two readings drops out, so read it over a phase whose connections
 * stay open (the servers' pools do).
 */
function clusterCpuMs(postmaster: number): number | null {
  const stat = (pid: string) => readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
  try {
    let total = 0;
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      let fields: string[];
      try { fields = stat(pid); } catch { continue; } // ended meanwhile
      // After the "pid (comm) " prefix: ppid is field 2 (index 1), utime and stime indexes 11 and 12, in 10 ms ticks.
      if (pid === String(postmaster) || fields[1] === String(postmaster)) total += (Number(fields[11]) + Number(fields[12])) * 10;
    }
    return total;
  } catch {
    return null;
  }
}
