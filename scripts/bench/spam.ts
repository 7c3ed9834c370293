/**
 * How good the builtin spam filter is, and what it costs (issue 43; docs/PERFORMANCE.md, "Spam
 * filter"). Prints one JSON line.
 *
 * 1. Accuracy: the SpamAssassin public corpus (spam-corpus.ts), k-fold cross-validation. For each
 *    fold a mailbox of its own (and a tenant of its own) in a real in-process app: the other folds'
 *    spam is stored in INBOX and moved to Junk, their ham stored in Junk and moved to INBOX, through
 *    the app's emails/folders moves, the path an IMAP MOVE takes (which is what trains); then the
 *    fold's messages are classified by the delivery pipeline's classify step (spam/filing.ts spamClassifyStep:
 *    rules, lists, reputation, model). Easy ham misfiled, hard ham misfiled, spam caught.
 *    Debian's bogofilter is trained and asked on the same folds side by side.
 * 2. Cold start: every easy ham message classified by an untrained mailbox.
 * 3. Classification latency: one ~5 KB message at a time against a trained mailbox, p50/p99.
 * 4. Cost in SMTP: scripts/bench/smtp.ts (phase 1 only) with MAILSTEAD_SPAM_FILTER=builtin and =off
 *    in this run, acknowledged msgs/s of each and their ratio. Before each run's warm-up the bench
 *    tenant's model is trained with --smtp-train corpus spam and as many ham messages through the
 *    junk / not-junk API (smtp.ts --spam-train, spam-train.ts), so that the builtin run's mail is
 *    tokenised and looked up in a trained model, not judged by the rules alone (a model is used only
 *    from MIN_TRAINED messages of each class). Training runs whatever the filter setting (only the
 *    verdicts depend on it), so the off run gets the same steps and the runs differ in the filter alone.
 *    `smtp.training` says what each run trained and whether its measured messages carried a BAYES_* reason.
 *
 * Usage: node --import tsx scripts/bench/spam.ts [--folds=10] [--run-folds=10] [--smtp-seconds=10] [--smtp=1] [--smtp-train=300] [--smtp-messages=corpus]
 *   (--main=FILE: phase 4's server is that build, e.g. another commit's worktree, for a pair)
 *   (--smtp-messages: what phase 4 sends, smtp.ts --messages: corpus messages (default), or plain, the repeated 5 KB line)
 *   (--run-folds=N: evaluate only the first N folds of the k, each still trained on all the others)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import type { Delivery } from '../../src/inbound/delivery-steps.js';
import { spamClassifyStep } from '../../src/spam/filing.js';
import type { SpamVerdict } from '../../src/inbound/spam-verdict.js';
import { bogofilterFold, bogofilterVersion, writeMessages } from './spam-bogofilter.js';
import { loadCorpus, type CorpusMessage, type Group } from './spam-corpus.js';
import { startBenchApp } from './in-process-app.js';

const { values } = parseArgs({ options: { folds: { type: 'string' }, 'run-folds': { type: 'string' }, 'smtp-seconds': { type: 'string' }, smtp: { type: 'string' }, 'smtp-train': { type: 'string' }, 'smtp-messages': { type: 'string' }, main: { type: 'string' } } });
const FOLDS = Number(values.folds ?? 10);
const RUN_FOLDS = Math.min(FOLDS, Number(values['run-folds'] ?? FOLDS));
const SMTP_SECONDS = Number(values['smtp-seconds'] ?? 10);
/** Corpus messages of each class the SMTP runs' tenant model is trained with (a realistic few hundred). */
const SMTP_TRAIN = Number(values['smtp-train'] ?? 300);
const SMTP_MESSAGES = values['smtp-messages'] ?? 'corpus';

const pct = (n: number, of: number) => (of === 0 ? null : Math.round((n / of) * 10000) / 100);
const percentile = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };

/** Where a run's time goes, by phase (ms, summed over folds): the JSON line's `phases_ms`. */
const phases: Record<string, number> = {};
async function timed<T>(phase: string, work: () => Promise<T> | T): Promise<T> {
  const t0 = performance.now();
  try { return await work(); } finally { phases[phase] = Math.round((phases[phase] ?? 0) + performance.now() - t0); }
}

const corpus = await timed('load_corpus', () => loadCorpus(FOLDS));
const bench = await startBenchApp();
const { app } = bench;
const db = app.db;
const now = Date.now();

/** A tenant, a domain and a mailbox of their own, with its folders: one per fold. */
async function makeMailbox(n: number): Promise<{ tenantId: number; mailboxId: number; address: string }> {
  const t = await sql<{ id: number }>`INSERT INTO tenants (name, plan_active, is_admin, created_at) VALUES (${`spam-bench-${n}`}, 1, 0, ${now}) RETURNING id`.execute(db);
  const tenantId = Number(t.rows[0].id);
  const hostname = `fold${n}.bench.test`;
  const d = await sql<{ id: number }>`INSERT INTO domains (tenant_id, hostname, parent_id, domain_type, total_mailbox_allowed, verification_token, created_at)
    VALUES (${tenantId}, ${hostname}, NULL, 'root', 10, 'x', ${now}) RETURNING id`.execute(db);
  const address = `box@${hostname}`;
  const m = await sql<{ id: number }>`INSERT INTO mailboxes (tenant_id, domain_id, address, password_hash, created_at)
    VALUES (${tenantId}, ${Number(d.rows[0].id)}, ${address}, 'x', ${now}) RETURNING id`.execute(db);
  const mailboxId = Number(m.rows[0].id);
  await app.imap.messages.folders(mailboxId);
  return { tenantId, mailboxId, address };
}

/** Stores messages in a folder as rows (as APPEND would: no verdict), answers their ids. */
async function store(box: { tenantId: number; mailboxId: number; address: string }, folder: string, list: CorpusMessage[]): Promise<number[]> {
  const ids: number[] = [];
  let uid = 1_000_000 + (folder === 'Junk' ? 500_000 : 0);
  await db.transaction().execute(async (trx) => {
    for (const m of list) {
      const r = await sql<{ id: number }>`INSERT INTO emails (tenant_id, mailbox_id, message_id, from_email, from_name, to_email, subject, snippet, received_at,
        received_max, size, has_attachments, read_at, deleted_at, updated_seq, created_at, folder, uid, flags, imported)
        VALUES (${box.tenantId}, ${box.mailboxId}, ${m.messageId}, ${m.fromEmail}, ${m.fromName}, ${box.address}, ${m.subject}, '', ${now}, ${now}, ${m.raw.length}, 0,
          NULL, NULL, 0, ${now}, ${folder}, ${uid++}, '', 1) RETURNING id`.execute(trx);
      const id = Number(r.rows[0].id);
      await sql`INSERT INTO email_contents (email_id, inbound_id, cc, bcc, headers, auth, body_text, body_html)
        VALUES (${id}, NULL, '[]', '[]', ${JSON.stringify(m.headers)}, NULL, ${m.bodyText}, ${m.bodyHtml})`.execute(trx);
      ids.push(id);
    }
  });
  return ids;
}

/** Trains through the IMAP move path: spam INBOX -> Junk, ham Junk -> INBOX (emails/folders/moves.ts trains on both). */
async function trainByMoves(box: { tenantId: number; mailboxId: number; address: string }, spam: CorpusMessage[], ham: CorpusMessage[]): Promise<void> {
  const spamIds = await timed('store', () => store(box, 'INBOX', spam));
  const hamIds = await timed('store', () => store(box, 'Junk', ham));
  await timed('train_moves', async () => {
    for (let i = 0; i < spamIds.length; i += 200) await app.imap.messages.move(box.mailboxId, spamIds.slice(i, i + 200), 'Junk');
    for (let i = 0; i < hamIds.length; i += 200) await app.imap.messages.move(box.mailboxId, hamIds.slice(i, i + 200), 'INBOX');
  });
}

/** The delivery pipeline's classify step (src/spam/filing.ts spamClassifyStep), one message at a time as delivery runs it. */
const classifyStep = spamClassifyStep('builtin');
async function classify(box: { tenantId: number; mailboxId: number; address: string }, list: CorpusMessage[]): Promise<SpamVerdict[]> {
  const out: SpamVerdict[] = [];
  for (const m of list) {
    const delivery: Delivery = {
      id: 0, kind: 'api', targets: [], mailFrom: m.fromEmail, size: m.raw.length, rawPath: null,
      message: {
        messageId: m.messageId, fromEmail: m.fromEmail, fromName: m.fromName, toEmail: box.address, cc: [], bcc: [], subject: m.subject, receivedAt: now,
        bodyText: m.bodyText, bodyHtml: m.bodyHtml, headers: m.headers, attachments: [], auth: null,
      },
    };
    const [[placement]] = await classifyStep(db, [{ delivery, recipients: [{ tenantId: box.tenantId, mailboxId: box.mailboxId, address: box.address }] }], now);
    out.push(placement.spam as SpamVerdict);
  }
  return out;
}

const tally = () => ({ 'easy-ham': { n: 0, junk: 0 }, 'hard-ham': { n: 0, junk: 0 }, spam: { n: 0, junk: 0 } } as Record<Group, { n: number; junk: number }>);
const ours = tally();
const bogo = tally();
const files = writeMessages(mkdtempSync(join(tmpdir(), 'spam-bench-files-')), corpus.map((m) => m.raw));
const bogoRoot = mkdtempSync(join(tmpdir(), 'spam-bench-bogo-'));
let trainMs = 0;
let trainedMessages = 0;
let trainedBox: { tenantId: number; mailboxId: number; address: string } | null = null;

for (let f = 0; f < RUN_FOLDS; f++) {
  const box = await makeMailbox(f);
  const train = corpus.filter((m) => m.fold !== f);
  const test = corpus.filter((m) => m.fold === f);
  const started = performance.now();
  await trainByMoves(box, train.filter((m) => m.group === 'spam'), train.filter((m) => m.group !== 'spam'));
  trainMs += performance.now() - started;
  trainedMessages += train.length;
  trainedBox ??= box;
  const verdicts = await timed('classify', () => classify(box, test));
  test.forEach((m, i) => { ours[m.group].n++; if (verdicts[i]!.verdict === 'junk') ours[m.group].junk++; });
  const fileOf = (m: CorpusMessage) => files[corpus.indexOf(m)];
  const said = await timed('bogofilter', () => bogofilterFold(join(bogoRoot, String(f)), { spam: train.filter((m) => m.group === 'spam').map(fileOf), ham: train.filter((m) => m.group !== 'spam').map(fileOf) }, test.map(fileOf)));
  test.forEach((m, i) => { bogo[m.group].n++; if (said[i]) bogo[m.group].junk++; });
  process.stderr.write(`fold ${f + 1}/${RUN_FOLDS}: ${JSON.stringify(ours)} ${JSON.stringify(phases)}\n`);
}

// Cold start: a mailbox nobody trained, every easy ham message.
const cold = await makeMailbox(1000);
const easy = corpus.filter((m) => m.group === 'easy-ham');
const coldJunk = (await classify(cold, easy)).filter((v) => v!.verdict === 'junk').length;

// Latency: ~5 KB messages one at a time against the first trained mailbox.
const fiveK = corpus.filter((m) => m.raw.length >= 4000 && m.raw.length <= 6000).slice(0, 300);
const times: number[] = [];
for (const m of fiveK) {
  const t0 = performance.now();
  await classify(trainedBox!, [m]);
  times.push(performance.now() - t0);
}
await bench.stop();
rmSync(bogoRoot, { recursive: true, force: true });

/** What smtp.ts --spam-train reports (spam-train.ts), less what is repeated elsewhere. */
interface SmtpTraining { trained?: { spam: number; ham: number }; refused?: number; seconds?: number; probe?: { bayes: string | null }; measured?: { checked: number; with_bayes: number; example: string | null; in_junk: number } | null }

/** Acknowledged msgs/s of scripts/bench/smtp.ts phase 1 with the server's filter set so, and what its tenant's model was trained with. */
function smtpRate(filter: string): { rate: number | null; cpu: number | null; training: SmtpTraining | null } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench/smtp.ts', '--warmup=2', `--seconds=${SMTP_SECONDS}`, '--attach-seconds=0', '--big=0', `--spam-train=${SMTP_TRAIN}`, `--messages=${SMTP_MESSAGES}`, ...(values.main ? [`--main=${values.main}`] : [])], {
    encoding: 'utf8', env: { ...process.env, BENCH_SERVER_ENV: `MAILSTEAD_SPAM_FILTER=${filter}` }, maxBuffer: 16 * 1024 * 1024, timeout: 600_000,
  });
  const line = r.stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  // smtp.ts's own stderr (the training's lines among it) passes through.
  process.stderr.write(line ? r.stderr.split('\n').filter((l) => l.startsWith('spam training:')).map((l) => `${filter}: ${l}\n`).join('') : r.stderr.slice(-2000));
  if (!line) return { rate: null, cpu: null, training: null };
  // The first object that has `key`, wherever the line nests it (one database or several side by side).
  const find = (o: unknown, key: string): unknown => {
    if (!o || typeof o !== 'object') return null;
    const rec = o as Record<string, unknown>;
    if (rec[key] !== undefined) return rec[key];
    for (const v of Object.values(rec)) { const x = find(v, key); if (x !== null) return x; }
    return null;
  };
  const parsed = JSON.parse(line) as unknown;
  const plain = find(parsed, 'plain_5kb') as { acked_per_s?: number; server_cpu_us_per_msg?: number } | null;
  return { rate: plain?.acked_per_s ?? null, cpu: plain?.server_cpu_us_per_msg ?? null, training: find(parsed, 'spam_training') as SmtpTraining | null };
}
/** One run's training as the line shows it: counts, the probe's and the measured mail's BAYES evidence. */
const trainingOf = (t: SmtpTraining | null) => t && {
  trained: t.trained, refused: t.refused, seconds: t.seconds, probe_bayes: t.probe?.bayes ?? null,
  measured_checked: t.measured?.checked ?? 0, measured_with_bayes: t.measured?.with_bayes ?? 0, measured_example: t.measured?.example ?? null, measured_in_junk: t.measured?.in_junk ?? null,
};
const smtp = values.smtp === '0' ? null : (() => {
  const on = smtpRate('builtin');
  const off = smtpRate('off');
  return {
    acknowledged_msgs_per_s_builtin: on.rate, acknowledged_msgs_per_s_off: off.rate, ratio: on.rate && off.rate ? Math.round((on.rate / off.rate) * 1000) / 1000 : null,
    // The server's CPU per acknowledged message during phase 1 (smtp.ts): steadier than rates on a shared machine.
    server_cpu_us_per_msg_builtin: on.cpu, server_cpu_us_per_msg_off: off.cpu,
    // The same training before both runs; BAYES_* reasons on the builtin run's measured mail show the model judged it.
    messages: SMTP_MESSAGES, training_per_class: SMTP_TRAIN, training: { builtin: trainingOf(on.training), off: trainingOf(off.training) },
    bayes_seen: (on.training?.measured?.with_bayes ?? 0) > 0,
  };
})();

const rates = (t: Record<Group, { n: number; junk: number }>) => ({
  easy_ham_misfiled_pct: pct(t['easy-ham'].junk, t['easy-ham'].n), hard_ham_misfiled_pct: pct(t['hard-ham'].junk, t['hard-ham'].n),
  spam_caught_pct: pct(t.spam.junk, t.spam.n), counts: t,
});
console.log(JSON.stringify({
  corpus: { messages: corpus.length, easy_ham: corpus.filter((m) => m.group === 'easy-ham').length, hard_ham: corpus.filter((m) => m.group === 'hard-ham').length, spam: corpus.filter((m) => m.group === 'spam').length },
  folds: FOLDS, folds_run: RUN_FOLDS,
  builtin: rates(ours), bogofilter: { version: bogofilterVersion(), ...rates(bogo) },
  cold_start: { easy_ham: easy.length, misfiled: coldJunk, misfiled_pct: pct(coldJunk, easy.length) },
  training_ms_per_message: Math.round((trainMs / Math.max(1, trainedMessages)) * 100) / 100,
  classify_ms_5kb: { samples: times.length, p50: Math.round(percentile(times, 50) * 100) / 100, p99: Math.round(percentile(times, 99) * 100) / 100 },
  smtp,
  phases_ms: phases,
}));
