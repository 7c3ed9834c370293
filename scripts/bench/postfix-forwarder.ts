/**
 * A throwaway Postfix instance for the forwarding benchmark (scripts/bench/forward.ts): its own
 * config directory, queue and log in a temporary folder, SMTP on 127.0.0.1, a virtual alias that
 * forwards to an external address, and a transport map sending that domain to a fixed host:port
 * (the benchmark's sink). Stock settings otherwise; no SRS, DKIM or ARC (plain Postfix has none).
 * Needs root and the Debian `postfix` package; started and stopped with `postfix -c DIR`.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const POSTFIX = '/usr/sbin/postfix';

export interface PostfixForwarder {
  port: number;
  /** Postfix's mail_version. */
  version: string;
  dir: string;
  /** The Postfix master's pid, for CPU accounting of the whole instance (see processTreeCpuMs). */
  masterPid(): number | null;
  /** The tail of its mail log (for a failure report). */
  logTail(lines?: number): string;
  stop(): Promise<void>;
}

/** A TCP port free on 127.0.0.1 at the moment of asking. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

// Debian's master.cf with every service out of chroot (the temporary folder is no chroot jail),
// and smtpd on the benchmark's address only.
const masterCf = (port: number) => `
127.0.0.1:${port} inet n - n - - smtpd
pickup     unix  n - n 60 1 pickup
cleanup    unix  n - n -  0 cleanup
qmgr       unix  n - n 300 1 qmgr
tlsmgr     unix  - - n 1000? 1 tlsmgr
rewrite    unix  - - n -  - trivial-rewrite
bounce     unix  - - n -  0 bounce
defer      unix  - - n -  0 bounce
trace      unix  - - n -  0 bounce
verify     unix  - - n -  1 verify
flush      unix  n - n 1000? 0 flush
proxymap   unix  - - n -  - proxymap
proxywrite unix  - - n -  1 proxymap
smtp       unix  - - n -  - smtp
relay      unix  - - n -  - smtp
showq      unix  n - n -  - showq
error      unix  - - n -  - error
retry      unix  - - n -  - error
discard    unix  - - n -  - discard
local      unix  - n n -  - local
virtual    unix  - n n -  - virtual
lmtp       unix  - - n -  - lmtp
anvil      unix  - - n -  1 anvil
scache     unix  - - n -  1 scache
postlog    unix-dgram n - n - 1 postlogd
`.trimStart();

const mainCf = (dir: string, aliasDomain: string) => `
compatibility_level = 3.6
queue_directory = ${dir}/spool
data_directory = ${dir}/data
mail_owner = postfix
setgid_group = postdrop
myhostname = mx.postfix.bench
mydomain = postfix.bench
myorigin = $myhostname
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination
virtual_alias_domains = ${aliasDomain}
virtual_alias_maps = texthash:${dir}/virtual
transport_maps = texthash:${dir}/transport
alias_maps =
alias_database =
smtpd_tls_security_level = none
smtp_tls_security_level = none
biff = no
maillog_file = ${dir}/maillog
maillog_file_prefixes = ${dir}
`.trimStart();

/**
 * Writes the instance's files and starts it: mail to `alias` is forwarded to `goto`, whose domain
 * is relayed to 127.0.0.1:`sinkPort`. Resolves once its SMTP port answers (30 s at most).
 */
export async function startPostfixForwarder(o: { alias: string; goto: string; sinkPort: number }): Promise<PostfixForwarder> {
  if (!existsSync(POSTFIX)) throw new Error('postfix is not installed (Debian: apt-get install postfix)');
  const dir = mkdtempSync(join(tmpdir(), 'mailstead-postfix-bench-'));
  // Postfix's processes run as the postfix user outside chroot: they must reach the folder; the
  // queue belongs to root (postfix check makes its sub-folders) and the data folder to postfix.
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'spool'), { mode: 0o755 });
  mkdirSync(join(dir, 'data'), { mode: 0o700 });
  await run('chown', ['postfix:postfix', join(dir, 'data')]);
  const port = await freePort();
  const aliasDomain = o.alias.slice(o.alias.indexOf('@') + 1);
  const gotoDomain = o.goto.slice(o.goto.indexOf('@') + 1);
  writeFileSync(join(dir, 'main.cf'), mainCf(dir, aliasDomain));
  writeFileSync(join(dir, 'master.cf'), masterCf(port));
  writeFileSync(join(dir, 'virtual'), `${o.alias} ${o.goto}\n`);
  writeFileSync(join(dir, 'transport'), `${gotoDomain} smtp:[127.0.0.1]:${o.sinkPort}\n`);
  // `start` runs `postfix check`, which makes the queue's folders with their owners and modes.
  await run(POSTFIX, ['-c', dir, 'start'], { timeout: 60_000 });
  const pidFile = join(dir, 'spool', 'pid', 'master.pid');
  const masterPid = () => {
    try {
      return Number(readFileSync(pidFile, 'utf8').trim()) || null;
    } catch {
      return null;
    }
  };
  const version = (await run('/usr/sbin/postconf', ['-c', dir, '-h', 'mail_version'])).stdout.trim();
  const instance: PostfixForwarder = {
    port,
    version,
    dir,
    masterPid,
    logTail(lines = 20) {
      try {
        return readFileSync(join(dir, 'maillog'), 'utf8').trim().split('\n').slice(-lines).join('\n');
      } catch {
        return '';
      }
    },
    async stop() {
      await run(POSTFIX, ['-c', dir, 'stop'], { timeout: 60_000 }).catch(() => undefined);
      // `stop` returns when master was told; its pid file goes when it has exited (15 s at most).
      for (let i = 0; i < 150 && existsSync(pidFile) && masterPid() && isAlive(masterPid()!); i++) await new Promise((r) => setTimeout(r, 100));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const deadline = Date.now() + 30_000;
  while (!(await answers(port))) {
    if (Date.now() > deadline) {
      const log = instance.logTail();
      await instance.stop();
      throw new Error(`postfix did not answer on ${port}: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return instance;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether something accepts a TCP connection on 127.0.0.1:port. */
async function answers(port: number): Promise<boolean> {
  const { connect } = await import('node:net');
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

/** utime, stime, cutime and cstime of a /proc stat line, in clock ticks (fields 14 to 17). */
function statTimes(pid: number | string): { ppid: number; own: number; children: number } | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return { ppid: Number(fields[1]), own: Number(fields[11]) + Number(fields[12]), children: Number(fields[13]) + Number(fields[14]) };
  } catch {
    return null;
  }
}

/**
 * CPU milliseconds the whole instance has used so far: the master, the daemons it runs now, and
 * the ones that already exited (the master reaps them, so their time is in its children's total).
 * Linux /proc; 100 ticks a second.
 */
export function instanceCpuMs(masterPid: number): number | null {
  const master = statTimes(masterPid);
  if (!master) return null;
  let ticks = master.own + master.children;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === masterPid) continue;
    const child = statTimes(entry);
    if (child && child.ppid === masterPid) ticks += child.own + child.children;
  }
  return (ticks * 1000) / 100;
}
