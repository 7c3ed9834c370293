/**
 * Seeds a data directory with stored email for the read benchmark, through the real store
 * functions (tenant and key service, domain and mailbox stores, the emails writer that the ingest
 * worker uses, the event recorder), not over HTTP. One tenant `bench` with a domain and
 * MAILBOXES mailboxes; EMAILS messages of about 5 KB of text spread over them, arriving roughly in
 * date order (a few minutes of jitter), 1 % of them containing the word `zephyrine`.
 * Writes the tenant's API key (read permission) to `<dir>/bench.key`.
 *
 * Usage: node --import tsx scripts/bench/seed-emails.ts DIR [--emails=N] [--mailboxes=M]
 * (defaults 1,000,000 and 100). Prints one JSON line: counts, seconds, database bytes per email.
 * Bounded by its count; stops early (and says so) after 3 hours.
 */
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../../src/clock.js';
import { openDatabase, databaseFile } from '../../src/db/connection.js';
import { createDomainStore } from '../../src/domains/store.js';
import { createMarkers } from '../../src/mailstore/markers.js';
import { createEmailStore } from '../../src/emails/store.js';
import { createEmailWriter, type Copy } from '../../src/mailstore/writer.js';
import { createMailboxStore } from '../../src/mailboxes/store.js';
import { createTenantService } from '../../src/tenants/service.js';
import { createTenantStore } from '../../src/tenants/store.js';
import { createEventRecorder } from '../../src/webhooks/events.js';

const args = new Map(process.argv.slice(3).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const dir = process.argv[2];
if (!dir || dir.startsWith('--')) {
  process.stderr.write('usage: seed-emails.ts DIR [--emails=N] [--mailboxes=M]\n');
  process.exit(2);
}
const EMAILS = Number(args.get('emails') ?? 1_000_000);
const MAILBOXES = Number(args.get('mailboxes') ?? 100);
const BATCH = 1000;
const DEADLINE = Date.now() + 3 * 3600_000;
/** The word the search benchmark looks for. */
const RARE_WORD = 'zephyrine';

// A small deterministic PRNG, so two seeds of the same size hold the same mail.
let state = 0x9e3779b9;
function rand(): number {
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state / 0x100000000;
}
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'pe', 'da', 'go', 'fu', 'bri', 'sto', 'ang', 'el', 'or', 'um', 'ix', 'en'];
const VOCAB = Array.from({ length: 20_000 }, () => {
  let w = '';
  const n = 2 + Math.floor(rand() * 3);
  for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(rand() * SYLLABLES.length)];
  return w;
}).filter((w) => w !== RARE_WORD);
// Zipf-like: low indexes are common words.
const word = () => VOCAB[Math.floor(VOCAB.length * rand() ** 3)];
function text(chars: number): string {
  const parts: string[] = [];
  let n = 0;
  while (n < chars) {
    const w = word();
    parts.push(w);
    n += w.length + 1;
    if (rand() < 0.07) { parts.push('\n'); n++; }
  }
  return parts.join(' ');
}

const database = await openDatabase(dir);
const db = database.db;
const clock = systemClock;
const tenants = createTenantService({ db, store: createTenantStore(), clock, cooldownSeconds: 300 });
const started = performance.now();
try {
  if (existsSync(join(dir, 'bench.key'))) throw new Error(`${dir} is already seeded`);
  const tenantId = await tenants.createTenant('bench', { plan: true });
  const key = await tenants.createKey('bench', 'read,write');
  writeFileSync(join(dir, 'bench.key'), key + '\n');
  const domainId = await createDomainStore().insert(db, {
    tenant_id: tenantId, hostname: 'bench.example', parent_id: null, domain_type: 'root',
    total_mailbox_allowed: 100, verification_token: '0'.repeat(32), created_at: clock.now(),
  });
  await createMailboxStore().insert(db, Array.from({ length: MAILBOXES }, (_, i) => ({
    tenant_id: tenantId, domain_id: domainId, address: `box${i}@bench.example`, display_name: `Box ${i}`,
    password_hash: 'x', created_at: clock.now(),
  })));
  const mailboxIds = (await db.selectFrom('mailboxes').select('id').where('tenant_id', '=', tenantId).orderBy('id').execute()).map((r) => r.id);
  const store = createEmailStore();
  const markers = createMarkers(clock, (x) => store.maxMarker(x));
  const writer = createEmailWriter({ store, markers, clock });
  const events = createEventRecorder({ clock });
  const start = Date.UTC(2020, 0, 1);
  let done = 0;
  while (done < EMAILS && Date.now() < DEADLINE) {
    const copies: Copy[] = [];
    for (let i = 0; i < BATCH && done + i < EMAILS; i++) {
      const n = done + i;
      const rare = n % 100 === 37;
      const body = text(4800) + (rare ? ` ${RARE_WORD} ${text(100)}` : '');
      const sender = Math.floor(rand() * 1000);
      const mailboxId = mailboxIds[n % mailboxIds.length];
      copies.push({
        tenantId, mailboxId, inboundId: null, toEmail: `box${n % mailboxIds.length}@bench.example`, size: body.length + 200,
        message: {
          messageId: `<seed-${n}@bench.example>`, fromEmail: `sender${sender}@remote${sender % 50}.example`, fromName: `Sender ${word()}`,
          toEmail: `box${n % mailboxIds.length}@bench.example`, cc: [], bcc: [], subject: `${word()} ${word()} ${word()}`,
          receivedAt: start + n * 60_000 + Math.floor((rand() - 0.5) * 600_000),
          bodyText: body, bodyHtml: null, headers: { 'X-Seed': String(n) }, attachments: [], auth: null,
        },
      });
    }
    await db.transaction().execute(async (trx) => {
      const created = await writer.storeCopies(trx, copies);
      await events.record(trx, created.map((c) => ({ tenantId, type: 'email.received' as const, emailId: c.id, mailboxId: c.mailboxId })));
    });
    done += copies.length;
    if (done % 50_000 === 0) process.stderr.write(`seeded ${done}\n`);
  }
  database.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  const bytes = statSync(databaseFile(dir)).size;
  console.log(JSON.stringify({
    bench: 'seed-emails', emails: done, mailboxes: MAILBOXES, complete: done === EMAILS,
    seconds: Math.round((performance.now() - started) / 100) / 10, db_bytes: bytes, db_bytes_per_email: Math.round(bytes / Math.max(done, 1)),
  }));
} finally {
  await database.close();
}
