import { existsSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import nodemailer from 'nodemailer';
import { manualClock } from '../../src/clock.js';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { makeInbox, pollUntil } from '../helpers/emails.js';

// SQLite only: raw messages too large for a queue row are files under the data directory there
// (on PostgreSQL every raw message is in its row: test/ingest/smtp.test.ts).

function send(app: TestClient, to: string, raw: string | Buffer) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: app.smtpPort, secure: false, ignoreTLS: true, name: 'client.example' });
  return transport.sendMail({ envelope: { from: 'sender@remote.example', to: [to] }, raw }).finally(() => transport.close());
}

const message = (messageId: string, subject: string, body: string) => [
  'From: Remote Sender <sender@remote.example>', 'To: someone@somewhere.example', `Subject: ${subject}`,
  `Message-ID: ${messageId}`, 'Date: Mon, 01 Jan 2024 10:00:00 +0000', 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', '', body, '',
].join('\r\n');

test('raw files are named relative to the data directory; a row naming one by an absolute path elsewhere (older versions, a moved data directory) still finds it, and the sweep keeps it', async (t) => {
  const clock = manualClock(Date.now());
  const app = await startTestApp(t, { clock });
  const box = await makeInbox(app);
  const raw = message('<moved@remote.example>', 'Moved', 'x'.repeat(300 * 1024));
  await send(app, box.address, raw);
  const [item] = (await pollUntil(app, box.key, '/v1/emails', (r) => r.body.data.length === 1, 45_000)).body.data;
  const row = await app.app.db.selectFrom('inbound').select(['id', 'raw_path']).executeTakeFirstOrThrow();
  t.regex(row.raw_path!, /^raw\/[0-9a-f-]{36}\.eml$/);
  const file = join(app.dataDir, row.raw_path!);
  await app.app.db.updateTable('inbound').set({ raw_path: `/somewhere/else/data/${row.raw_path}` }).where('id', '=', row.id).execute();
  const fetchRaw = () => fetch(`${app.base}/v1/emails/${item.id}/raw`, { headers: { authorization: `Bearer ${box.key}` } });
  t.true(Buffer.from(await (await fetchRaw()).arrayBuffer()).toString('utf8').endsWith(raw));
  clock.advance(2 * 3600_000);
  await app.app.cron.run('ingest.sweep-orphans');
  t.true(existsSync(file), 'named by its file name, so not an orphan');
  unlinkSync(file);
  const gone = await fetchRaw();
  t.is(gone.status, 404);
  t.deepEqual(await gone.json(), { status: 'error', reason: 'Raw message file is missing from the data directory' });
});
