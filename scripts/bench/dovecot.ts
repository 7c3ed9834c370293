/**
 * Dovecot (Debian's `dovecot-imapd`) as the IMAP benchmark's reference: a config of its own in a
 * temporary dir (one passwd-file user, a Maildir, implicit TLS on a free loopback port with a
 * self-signed certificate, like ours), run in the foreground (`dovecot -F -c conf`) and stopped
 * at the end. The Maildir is written directly (files in cur/), which is how Dovecot finds mail
 * delivered by any MTA; it indexes it on the first SELECT, which the benchmark does unmeasured.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';

export const DOVECOT_USER = 'bench';
export const DOVECOT_PASSWORD = 'bench-password-2026';

/** A free loopback port (bound and released). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Writes `messages` into `dir`/home/Maildir/cur, one file each (seen, as mail already read). */
export function writeMaildir(dir: string, messages: Buffer[]): void {
  const cur = join(dir, 'home', 'Maildir', 'cur');
  for (const sub of ['cur', 'new', 'tmp']) mkdirSync(join(dir, 'home', 'Maildir', sub), { recursive: true });
  const t = Math.floor(Date.now() / 1000);
  messages.forEach((m, i) => writeFileSync(join(cur, `${t}.M${i}P1.bench,S=${m.length}:2,${i % 3 === 0 ? '' : 'S'}`), m));
}

export interface Dovecot {
  port: number;
  pid: number;
  /** Sum of the proportional set size (shared pages split) of the master and its children, MB. */
  pssMb(): number;
  stop(): Promise<void>;
}

/** Starts Dovecot on `dir` (whose home/ holds the Maildir) and waits until it accepts connections. */
export async function startDovecot(dir: string, extraUsers: string[] = []): Promise<Dovecot> {
  const port = await freePort();
  // Dovecot refuses mail access as root: the mail belongs to nobody.
  const nobody = { uid: Number(spawnSync('id', ['-u', 'nobody']).stdout), gid: Number(spawnSync('id', ['-g', 'nobody']).stdout) };
  const ssl = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
  if (ssl.status !== 0) throw new Error('openssl could not make a certificate');
  // The extra users (empty mailboxes, for the idle clients) live under home/ too, so they are nobody's.
  for (const u of extraUsers) mkdirSync(join(dir, 'home', 'users', u), { recursive: true });
  const line = (user: string, home: string) => `${user}:{PLAIN}${DOVECOT_PASSWORD}:${nobody.uid}:${nobody.gid}::${home}\n`;
  writeFileSync(join(dir, 'passwd'), line(DOVECOT_USER, join(dir, 'home')) + extraUsers.map((u) => line(u, join(dir, 'home', 'users', u))).join(''));
  const conf = `
protocols = imap
listen = 127.0.0.1
base_dir = ${join(dir, 'run')}
state_dir = ${join(dir, 'state')}
log_path = ${join(dir, 'dovecot.log')}
ssl = required
ssl_cert = <${join(dir, 'cert.pem')}
ssl_key = <${join(dir, 'key.pem')}
auth_mechanisms = plain login
first_valid_uid = 1
mail_location = maildir:~/Maildir
passdb {
  driver = passwd-file
  args = ${join(dir, 'passwd')}
}
userdb {
  driver = passwd-file
  args = ${join(dir, 'passwd')}
}
# Enough processes and clients for the 500 idle connections.
default_process_limit = 1000
default_client_limit = 4000
protocol imap {
  mail_max_userip_connections = 1000
}
service imap-login {
  inet_listener imap {
    port = 0
  }
  inet_listener imaps {
    port = ${port}
    ssl = yes
  }
}
`;
  writeFileSync(join(dir, 'dovecot.conf'), conf);
  const chownAll = (p: string) => {
    chownSync(p, nobody.uid, nobody.gid);
    for (const e of readdirSync(p, { withFileTypes: true })) {
      if (e.isDirectory()) chownAll(join(p, e.name));
      else chownSync(join(p, e.name), nobody.uid, nobody.gid);
    }
  };
  chownAll(join(dir, 'home'));
  spawnSync('chmod', ['755', dir]);
  const child = spawn('dovecot', ['-F', '-c', join(dir, 'dovecot.conf')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ok = await new Promise<boolean>((r) => {
      const s = net.connect(port, '127.0.0.1', () => { s.destroy(); r(true); });
      s.on('error', () => r(false));
    });
    if (ok) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`dovecot did not start: ${safeRead(join(dir, 'dovecot.log')).slice(-800)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const pid = child.pid!;
  return {
    port, pid,
    pssMb() {
      const kids = new Map<number, number[]>();
      for (const e of readdirSync('/proc')) {
        if (!/^\d+$/.test(e)) continue;
        const ppid = Number(safeRead(`/proc/${e}/stat`).replace(/^.*\) /s, '').split(' ')[1]);
        kids.set(ppid, [...(kids.get(ppid) ?? []), Number(e)]);
      }
      let kb = 0;
      const walk = (p: number) => {
        kb += Number(/Pss:\s+(\d+)/.exec(safeRead(`/proc/${p}/smaps_rollup`))?.[1] ?? 0);
        for (const c of kids.get(p) ?? []) walk(c);
      };
      walk(pid);
      return kb / 1024;
    },
    async stop() {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      child.kill('SIGKILL');
    },
  };
}

function safeRead(file: string): string {
  try { return readFileSync(file, 'utf8'); } catch { return ''; }
}
