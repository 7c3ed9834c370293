import type { Db } from '../../src/db/connection.js';
import type { Copy } from '../../src/mailstore/writer.js';

// The mail of the read tests that compare answers (postgres-reads.test.ts: SQLite's against
// PostgreSQL's; reads.test.ts: the plain SQL's against the Kysely queries it replaced).

export const T0 = Date.UTC(2024, 2, 1, 9, 0, 0);
export const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];

/** The mail both databases hold: tenants 1 and 2, mailboxes 1 and 2 of tenant 1 and 3 of tenant 2. */
export function copies(): Copy[] {
  const out: Copy[] = [];
  for (let i = 0; i < 70; i++) {
    const tenantId = i % 7 === 6 ? 2 : 1;
    const mailboxId = tenantId === 2 ? 3 : 1 + (i % 2);
    // Dates out of arrival order, with ties (a cursor breaks them by id).
    const receivedAt = T0 + ((i * 37) % 50) * 60_000;
    const words = `${WORDS[i % 10]} ${WORDS[(i * 3) % 10]}`;
    out.push({
      tenantId, mailboxId, inboundId: null, toEmail: `inbox${mailboxId}@example.test`, size: 1000 + i,
      message: {
        messageId: `<m${i}@sender.example>`, fromEmail: i % 5 === 0 ? 'carla.finance@acme.example' : `sender${i % 4}@mail.example`,
        fromName: i % 3 === 0 ? null : `Sender Nümber ${i % 4}`, toEmail: `inbox${mailboxId}@example.test`, cc: i % 4 === 0 ? ['cc@example.test'] : [], bcc: [],
        subject: i % 9 === 0 ? `Crème brûlée ${words} #${i}` : `Report ${words} #${i}`, receivedAt,
        bodyText: i % 6 === 0 ? null : `Body of ${i}: the ${WORDS[(i + 5) % 10]} numbers are up, see foo-bar.example/x?y=1`,
        bodyHtml: i % 6 === 0 ? `<p>Html <b>${WORDS[(i + 2) % 10]}</b> caf&eacute;</p>` : null,
        headers: { 'x-seq': String(i) }, auth: i % 2 ? { spf: 'pass', dkim: 'none', dmarc: null } as never : null,
        attachments: i % 8 === 0 ? [{ filename: `f${i}.txt`, contentType: 'text/plain', size: 5, sha256: 'a'.repeat(64), contentId: null, disposition: 'attachment' }] : [],
      },
    });
  }
  return out;
}

export async function seed(db: Db, now: number): Promise<void> {
  for (const t of [1, 2]) await db.insertInto('tenants').values({ id: t, name: `t${t}`, plan_active: 1, is_admin: 0, created_at: now } as never).execute();
  for (const [id, tenant] of [[1, 1], [2, 1], [3, 2]]) {
    await db.insertInto('domains').values({ id, tenant_id: tenant, hostname: `d${id}.example.test`, domain_type: 'root', total_mailbox_allowed: 10, verification_token: 'x', created_at: now } as never).execute();
    await db.insertInto('mailboxes').values({ id, tenant_id: tenant, domain_id: id, address: `inbox${id}@example.test`, password_hash: 'x', created_at: now } as never).execute();
  }
}

