import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, utimesSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { ImapFlow } from 'imapflow';
import { tempDir } from './app.js';
import { fixedPort } from './ports.js';

/** The Debian dovecot-imapd binary (.ci/run installs it). */
export const DOVECOT = '/usr/sbin/dovecot';

/** Waits (bounded) until something accepts connections on the port. */
async function listening(port: number, child: ChildProcess, log: () => string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`dovecot did not start: ${log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A running Dovecot: its plain IMAP port on 127.0.0.1 and the users of its passwd-file. */
export interface Dovecot {
  port: number;
  /** An imapflow client logged in as `user` (closed after the test). */
  client(user: string): Promise<ImapFlow>;
  /**
   * Writes messages straight into a user's Maildir (much faster than APPEND for thousands): the
   * file's mtime is its INTERNALDATE, the `:2,` letters its flags. Before the user's first login.
   */
  seed(user: string, folder: string, messages: Array<{ raw: string | Buffer; date: Date; info?: string }>): void;
}

/**
 * Starts a Debian Dovecot as a foreground process of its own (not the system service): a
 * temporary configuration, Maildir mail under a temporary directory, a passwd-file with the given
 * users and passwords, plain IMAP on a free loopback port. Stopped after the test.
 */
export async function startDovecot(t: ExecutionContext, users: Record<string, string>): Promise<Dovecot> {
  if (!existsSync(DOVECOT)) throw new Error(`${DOVECOT} is missing (Debian dovecot-imapd; .ci/run installs it)`);
  const dir = tempDir(t, 'mailstead-dovecot-');
  const port = await fixedPort();
  const user = process.getuid?.() ?? 0;
  const group = process.getgid?.() ?? 0;
  const name = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.split(':')[2] === String(user))?.split(':')[0] ?? 'root';
  const groupName = readFileSync('/etc/group', 'utf8').split('\n').find((l) => l.split(':')[2] === String(group))?.split(':')[0] ?? 'root';
  for (const sub of ['run', 'state', 'mail', 'home']) mkdirSync(join(dir, sub));
  // Dovecot's login processes refuse to run as root: as root they run as Debian's own users, who
  // must reach the sockets in base_dir.
  const asRoot = user === 0;
  if (asRoot) chmodSync(dir, 0o755);
  const internal = asRoot ? 'dovecot' : name;
  // Nor does Dovecot give mail to uid 0: as root the mail belongs to the dovecot user.
  const owner = asRoot ? readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('dovecot:'))!.split(':') : null;
  const mailUid = owner ? Number(owner[2]) : user;
  const mailGid = owner ? Number(owner[3]) : group;
  if (asRoot) for (const sub of ['mail', 'home']) chownSync(join(dir, sub), mailUid, mailGid);
  const login = asRoot ? 'dovenull' : name;
  writeFileSync(join(dir, 'passwd'), Object.entries(users).map(([u, p]) => `${u}:{PLAIN}${p}\n`).join(''));
  writeFileSync(join(dir, 'dovecot.conf'), `
protocols = imap
listen = 127.0.0.1
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = ${internal}
${asRoot ? '' : `default_internal_group = ${groupName}`}
default_login_user = ${login}
first_valid_uid = 0
mail_location = maildir:${dir}/mail/%u
passdb {
  driver = passwd-file
  args = scheme=PLAIN ${dir}/passwd
}
userdb {
  driver = static
  args = uid=${mailUid} gid=${mailGid} home=${dir}/home/%u
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
namespace inbox {
  inbox = yes
  separator = /
  mailbox Sent {
    special_use = \\Sent
    auto = create
  }
  mailbox Junk {
    special_use = \\Junk
    auto = create
  }
  mailbox Trash {
    special_use = \\Trash
    auto = create
  }
  mailbox Drafts {
    special_use = \\Drafts
    auto = create
  }
}
`);
  let out = '';
  const child = spawn(DOVECOT, ['-F', '-c', join(dir, 'dovecot.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(async () => {
    if (child.exitCode === null) { child.kill('SIGTERM'); await exited; }
  });
  const log = () => out + (existsSync(join(dir, 'dovecot.log')) ? readFileSync(join(dir, 'dovecot.log'), 'utf8') : '');
  await listening(port, child, log);
  t.teardown(() => { if (process.env.DOVECOT_LOG) console.log(log()); });
  return {
    port,
    seed(login, folder, messages) {
      const root = join(dir, 'mail', login);
      const box = folder === 'INBOX' ? root : join(root, `.${folder.split('/').join('.')}`);
      for (const p of [root, box, join(box, 'cur'), join(box, 'new'), join(box, 'tmp')]) {
        mkdirSync(p, { recursive: true });
        chownSync(p, mailUid, mailGid);
      }
      messages.forEach((m, i) => {
        const file = join(box, 'cur', `${Math.floor(m.date.getTime() / 1000)}.M${i}P${process.pid}.seed:2,${m.info ?? ''}`);
        writeFileSync(file, m.raw);
        chownSync(file, mailUid, mailGid);
        utimesSync(file, m.date, m.date);
      });
    },
    async client(login: string) {
      const c = new ImapFlow({ host: '127.0.0.1', port, secure: false, doSTARTTLS: false, auth: { user: login, pass: users[login]! }, logger: false });
      c.on('error', () => undefined);
      await c.connect();
      t.teardown(() => c.logout().catch(() => c.close()));
      return c;
    },
  };
}
