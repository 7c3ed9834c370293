import test from 'ava';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { loadInstallSecret } from '../../src/install-secret.js';
import { openPostgresDatabase } from '../../src/db/postgres.js';
import { tempDir } from '../helpers/app.js';
import { eventually, nodeMailbox, startNodes } from '../helpers/nodes.js';
import { freshPostgresDatabase } from '../helpers/pg.js';

// On PostgreSQL the nodes share nothing but the database (DECISIONS.md section 17), so the install
// secret that signs attachment links and SRS addresses is the database's, not each data directory's.

const hex = (byte: string) => byte.repeat(64);

test('the first node writes the secret its data directory holds; later nodes use the database\'s, whatever their own', async (t) => {
  const url = await freshPostgresDatabase(t);
  const database = await openPostgresDatabase(url, { max: 2 });
  t.teardown(() => database.close());
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, new Writable({ write(chunk, _enc, done) { warnings.push(String(chunk)); done(); } }));

  const first = tempDir(t);
  writeFileSync(join(first, 'install.secret'), `${hex('a')}\n`);
  t.is((await loadInstallSecret(database, first, logger)).toString('hex'), hex('a'), 'an operator\'s secret is kept');

  const bare = tempDir(t);
  t.is((await loadInstallSecret(database, bare, logger)).toString('hex'), hex('a'));
  t.false(existsSync(join(bare, 'install.secret')), 'no file of its own is made');

  const other = tempDir(t);
  writeFileSync(join(other, 'install.secret'), `${hex('b')}\n`);
  t.is((await loadInstallSecret(database, other, logger)).toString('hex'), hex('a'), 'the database\'s wins');
  t.true(warnings.some((w) => w.includes('differs from the database')), 'and the difference is logged');
  t.false(warnings.some((w) => w.includes(hex('a')) || w.includes(hex('b'))), 'without the secrets');
});

test.serial('an attachment link handed out by one node downloads from the other', async (t) => {
  t.timeout(240_000);
  const { cluster, nodes: [a, b] } = await startNodes(t, 2);
  const key = await cluster.tenantKey();
  const address = await nodeMailbox(t, a!, key, 'links.two-nodes.test', 'Links');

  const content = Buffer.from('shared between the nodes\n');
  const sent = await a!.post('/v1/mail/inbound', key, {
    message_id: '<links@sender.example>', from_email: 'ann@sender.example', to_email: address, subject: 'link',
    received_at: new Date().toISOString(), body_text: 'see attached',
    attachments: [{ filename: 'note.txt', content_type: 'text/plain', content: content.toString('base64') }],
  });
  t.is(sent.status, 200);
  const email = await eventually('the email listed on A', async () => {
    const r = await a!.get('/v1/emails?per_page=10', key);
    return r.body.data?.[0];
  });
  const full = await a!.get(`/v1/emails/${email.id}`, key);
  const link = await a!.get(`/v1/emails/${email.id}/attachments/${full.body.data.attachments[0].id}`, key);
  t.is(link.status, 200);
  const path = new URL(link.body.data.url).pathname.replace(/^\/api/, '');
  const onB = await b!.request('GET', path);
  t.is(onB.status, 200, 'B checks the link A signed');
  t.is(onB.body, content.toString());
});
