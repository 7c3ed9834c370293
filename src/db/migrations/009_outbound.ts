import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/** The domain of the target address whose forwards list `address` (the alias a forward leaves from). */
function viaDomain(targetsJson: string, address: string): string | null {
  try {
    const targets = JSON.parse(targetsJson) as Array<{ address?: string; forwards?: string[] }>;
    const t = targets.find((x) => x.forwards?.includes(address));
    const at = t?.address?.lastIndexOf('@') ?? -1;
    return t?.address && at > 0 ? t.address.slice(at + 1).toLowerCase() : null;
  } catch {
    return null;
  }
}

/**
 * The outbound queue (DECISIONS.md section 12): one row per recipient of forwards, submissions and
 * DSNs, and the bytes of messages no inbound row holds. The forwards that earlier versions wrote
 * (and never sent) move into it as queued forward items, due now; the forwards table goes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE outbound_messages (
    id ${t.id},
    raw ${t.blob} NOT NULL,
    created_at ${t.int} NOT NULL
  )`.execute(db);
  // AUTOINCREMENT: an item id the API has shown is never reused for another item.
  await sql`CREATE TABLE outbound (
    id ${t.serial},
    tenant_id ${t.int} NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('forward', 'submission', 'dsn')),
    email_id ${t.int},
    inbound_id ${t.int},
    message_ref ${t.int} REFERENCES outbound_messages(id),
    mail_from TEXT NOT NULL,
    rcpt_to TEXT NOT NULL,
    via_domain TEXT,
    auth TEXT,
    status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'failed')),
    attempts ${t.int} NOT NULL DEFAULT 0,
    next_attempt_at ${t.int},
    last_response TEXT,
    dsn_sent ${t.int} NOT NULL DEFAULT 0,
    created_at ${t.int} NOT NULL,
    updated_at ${t.int} NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX outbound_due ON outbound(next_attempt_at) WHERE status = 'queued'`.execute(db);
  await sql`CREATE INDEX outbound_tenant ON outbound(tenant_id, id)`.execute(db);
  await sql`CREATE INDEX outbound_inbound ON outbound(inbound_id) WHERE inbound_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX outbound_message_ref ON outbound(message_ref) WHERE message_ref IS NOT NULL`.execute(db);

  const forwards = await db.selectFrom('forwards').innerJoin('inbound', 'inbound.id', 'forwards.inbound_id')
    .select(['forwards.tenant_id', 'forwards.inbound_id', 'forwards.mail_from', 'forwards.address', 'forwards.created_at', 'inbound.targets', 'inbound.message', 'inbound.kind'])
    .orderBy('forwards.id').execute();
  for (const f of forwards) {
    let auth: string | null = null;
    if (f.kind === 'api') {
      try { auth = JSON.stringify((JSON.parse(f.message) as { auth?: unknown }).auth ?? null); } catch { auth = null; }
    }
    await db.insertInto('outbound').values({
      tenant_id: f.tenant_id, kind: 'forward', email_id: null, inbound_id: f.inbound_id, message_ref: null,
      mail_from: f.mail_from ?? '', rcpt_to: f.address, via_domain: viaDomain(f.targets, f.address), auth,
      status: 'queued', attempts: 0, next_attempt_at: f.created_at, last_response: null, dsn_sent: 0,
      created_at: f.created_at, updated_at: f.created_at,
    }).execute();
  }
  await sql`DROP TABLE forwards`.execute(db);
}

/**
 * Back to the schema of 008: the forwards table as 005 made it, holding the forward items that were
 * still queued (sent, failed, submission and DSN items have no place there and go).
 */
export async function down(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE forwards (
    id ${t.id},
    tenant_id ${t.int} NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    inbound_id ${t.int} NOT NULL REFERENCES inbound(id),
    mail_from TEXT,
    address TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued',
    attempts ${t.int} NOT NULL DEFAULT 0,
    next_attempt_at ${t.int} NOT NULL,
    last_error TEXT,
    created_at ${t.int} NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX forwards_queued ON forwards(next_attempt_at) WHERE status = 'queued'`.execute(db);
  await sql`CREATE INDEX forwards_inbound ON forwards(inbound_id)`.execute(db);
  await sql`INSERT INTO forwards (tenant_id, inbound_id, mail_from, address, attempts, next_attempt_at, created_at)
    SELECT tenant_id, inbound_id, NULLIF(mail_from, ''), rcpt_to, attempts, next_attempt_at, created_at
    FROM outbound WHERE kind = 'forward' AND status = 'queued' AND inbound_id IS NOT NULL`.execute(db);
  await sql`DROP TABLE outbound`.execute(db);
  await sql`DROP TABLE outbound_messages`.execute(db);
}
