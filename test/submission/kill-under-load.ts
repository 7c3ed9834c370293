import type { ExecutionContext } from 'ava';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { ServerProcess } from '../helpers/process.js';

/**
 * `sessions` submission sessions (one login each, implicit TLS on `port`) submit numbered messages
 * back to back until `atLeast` are acknowledged (90 s at most); then the server is SIGKILLed under
 * them. Resolves with the numbers acknowledged and how many were attempted (acknowledged or not).
 */
export async function submitUntilKilled(t: ExecutionContext, server: ServerProcess, o: {
  port: number; sessions: number; atLeast: number; user: string; pass: string; message: (n: number) => Mail.Options;
}): Promise<{ acked: Set<number>; attempted: number }> {
  const acked = new Set<number>();
  let next = 0;
  let killed = false;
  const session = async () => {
    const tr = nodemailer.createTransport({
      pool: true, maxConnections: 1, host: '127.0.0.1', port: o.port, secure: true, tls: { rejectUnauthorized: false },
      auth: { user: o.user, pass: o.pass }, connectionTimeout: 15_000, socketTimeout: 30_000,
    });
    try {
      while (!killed) {
        const n = next++;
        try {
          await tr.sendMail(o.message(n));
          acked.add(n);
        } catch {
          return;
        }
      }
    } finally {
      tr.close();
    }
  };
  const sessions = Array.from({ length: o.sessions }, session);
  const deadline = Date.now() + 90_000;
  while (acked.size < o.atLeast && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  killed = true;
  server.child.kill('SIGKILL');
  t.is(await server.exited, 'SIGKILL');
  await Promise.all(sessions);
  t.true(acked.size >= o.atLeast, `only ${acked.size} messages acknowledged before the kill`);
  return { acked, attempted: next };
}
