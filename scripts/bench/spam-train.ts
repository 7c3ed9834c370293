/**
 * The realistic case for the SMTP cost of the spam filter (issue 43: spam.ts phase 4 runs
 * `smtp.ts --spam-train=N`): before the measured phases the bench tenant gets a trained tenant-wide
 * model, through the product's own paths. N SpamAssassin corpus spam messages, then N ham, are
 * delivered over SMTP to a mailbox of the tenant's (`trainer@`), then `POST /v1/emails/{id}/junk` is
 * called on each spam message and `not-junk` on each ham one (what the dashboard's buttons do, and
 * the same training an IMAP move into or out of Junk runs): each trains the trainer's model and the
 * tenant's (src/spam/training.ts). The benchmark's own mailbox stays untrained, so its mail is
 * classified by the tenant model (src/spam/classify.ts modelsOf), tokenised and looked up.
 *
 * Training does not depend on MAILSTEAD_SPAM_FILTER (only verdicts do), so a run with the filter off
 * gets the same steps and the two runs differ only in the filter setting.
 *
 * Then a spam message outside the training sample is delivered to the trainer as a probe: with the
 * builtin filter its verdict's BAYES_* reason names the model's totals (the signal that the training
 * is in place); after the measured phase, `measuredVerdicts` reads the verdicts of measured mail.
 */
import { corpusSample } from './spam-corpus.js';
import { LeanSmtpClient } from './smtp-client.js';

/** The bench's API client (smtp.ts `call`). */
export type BenchCall = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

/** What was trained, for the bench's JSON line. */
export interface SpamTrainingResult {
  per_class: number;
  delivered: { spam: number; ham: number };
  refused: number;
  trained: { spam: number; ham: number };
  seconds: number;
  /** The probe's verdict: rules named, and the BAYES reason's detail (the model's totals) if any. */
  probe: { verdict: string | null; filter: string | null; rules: string[]; bayes: string | null };
}

/** Runs `work` over `items` with `width` in flight; answers how many succeeded. */
async function pool<T>(items: T[], width: number, work: (item: T) => Promise<boolean>): Promise<number> {
  let next = 0;
  let ok = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) if (await work(items[next++])) ok++;
  }));
  return ok;
}

/** Ids of every email of the tenant listed in `folder` (GET /v1/emails lists INBOX unless told; pages of 100). */
async function listedIds(call: BenchCall, folder: string): Promise<Set<number>> {
  const ids = new Set<number>();
  let cursor: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const r = await call('GET', `/v1/emails?per_page=100&folder=${folder}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    for (const e of r.body.data ?? []) ids.add(Number(e.id));
    cursor = r.body.meta?.next_cursor ?? null;
    if (!cursor) break;
  }
  return ids;
}

/** Ids listed in INBOX or Junk (where delivery files a verdict). */
const filedIds = async (call: BenchCall) => new Set([...await listedIds(call, 'INBOX'), ...await listedIds(call, 'Junk')]);

/** Waits until `count` emails beyond `known` are filed (60 s at most); answers their ids. */
async function newlyListed(call: BenchCall, known: Set<number>, count: number): Promise<number[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const fresh = [...(await filedIds(call))].filter((id) => !known.has(id));
    if (fresh.length >= count) return fresh;
    if (Date.now() > deadline) throw new Error(`spam training: ${fresh.length} of ${count} delivered messages listed within 60 s`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

/** Sends raw messages to `rcpt` over four SMTP sessions; answers how many were acknowledged. */
async function deliver(port: number, rcpt: string, raws: string[]): Promise<number> {
  const clients = await Promise.all(Array.from({ length: 4 }, () => LeanSmtpClient.open(port, 'corpus.example')));
  let next = 0;
  let acked = 0;
  await Promise.all(clients.map(async (c) => {
    while (next < raws.length) {
      const raw = raws[next++];
      // A refused message is left out of the training (counted in `refused`); the session goes on.
      await c.send('sender@corpus.example', rcpt, Buffer.from(raw, 'utf8')).then(() => { acked++; }, () => undefined);
    }
    c.quit();
  }));
  return acked;
}

/** Reasons' rule names and the first BAYES_* reason's detail of a verdict. */
function describe(spam: { verdict?: string; filter?: string; reasons?: Array<{ rule: string; detail?: string }> } | null) {
  const reasons = spam?.reasons ?? [];
  const bayes = reasons.find((r) => r.rule.startsWith('BAYES_'));
  return { verdict: spam?.verdict ?? null, filter: spam?.filter ?? null, rules: reasons.map((r) => r.rule), bayes: bayes ? `${bayes.rule}: ${bayes.detail ?? ''}` : null };
}

/**
 * Trains the tenant model with `perClass` corpus messages of each class, as described above; the
 * trainer mailbox `trainer@domain` is created here. What it leaves in INBOX and Junk stays listed by
 * GET /v1/emails: the caller counts it out of its own totals (`listedAfter`, the two folders' count then).
 */
export async function trainTenantModel(o: {
  call: BenchCall; createMailbox(address: string): Promise<void>; smtpPort: number; domain: string; perClass: number;
}): Promise<SpamTrainingResult & { listedAfter: number }> {
  const started = performance.now();
  const trainer = `trainer@${o.domain}`;
  await o.createMailbox(trainer);
  const sample = corpusSample(o.perClass);
  const before = await filedIds(o.call);
  // Spam first, then ham, each waited for until listed: which ids are which class needs no matching of messages.
  const spamSent = await deliver(o.smtpPort, trainer, sample.spam);
  const spamIds = await newlyListed(o.call, before, spamSent);
  const hamSent = await deliver(o.smtpPort, trainer, sample.ham);
  const hamIds = await newlyListed(o.call, new Set([...before, ...spamIds]), hamSent);
  const judge = (verb: 'junk' | 'not-junk') => async (id: number) => (await o.call('POST', `/v1/emails/${id}/${verb}`)).body?.status === 'success';
  const spamTrained = await pool(spamIds, 4, judge('junk'));
  const hamTrained = await pool(hamIds, 4, judge('not-junk'));
  // Each judgement trained inside its request's transaction; the probe's verdict shows the model in use.
  const known = new Set([...before, ...spamIds, ...hamIds]);
  if ((await deliver(o.smtpPort, trainer, [sample.probe])) !== 1) throw new Error('spam training: the probe message was refused');
  const [probeId] = await newlyListed(o.call, known, 1);
  const probe = describe((await o.call('GET', `/v1/emails/${probeId}`)).body.data?.spam ?? null);
  return {
    per_class: o.perClass, delivered: { spam: spamSent, ham: hamSent },
    refused: sample.spam.length + sample.ham.length - spamSent - hamSent,
    trained: { spam: spamTrained, ham: hamTrained }, seconds: Math.round((performance.now() - started) / 100) / 10, probe,
    listedAfter: (await filedIds(o.call)).size,
  };
}

/**
 * The verdicts of up to `sample` measured messages (subject `tag N`, the newest filed in INBOX, then
 * Junk): how many carry a BAYES_* reason, and one such reason's detail, so the line shows whether
 * the model judged them; and how many measured ones are among the newest hundred of Junk (filed as junk).
 */
export async function measuredVerdicts(call: BenchCall, tag: string, sample = 5): Promise<{ checked: number; with_bayes: number; example: string | null; in_junk: number }> {
  const newest = async (folder: string) => ((await call('GET', `/v1/emails?per_page=100&folder=${folder}`)).body.data ?? [])
    .filter((e: any) => String(e.subject).startsWith(`${tag} `)).map((e: any) => Number(e.id)) as number[];
  const inbox = await newest('INBOX');
  const junk = await newest('Junk');
  const ids = [...inbox, ...junk].slice(0, sample);
  let withBayes = 0;
  let bayes: string | null = null;
  let other: string | null = null;
  for (const id of ids) {
    const d = describe((await call('GET', `/v1/emails/${id}`)).body.data?.spam ?? null);
    if (d.bayes) { withBayes++; bayes ??= d.bayes; }
    other ??= `${d.filter ?? 'no verdict'}: ${d.rules.join(',') || 'no reasons'}`;
  }
  return { checked: ids.length, with_bayes: withBayes, example: bayes ?? other, in_junk: junk.length };
}
