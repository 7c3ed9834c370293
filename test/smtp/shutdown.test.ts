import { connect } from 'node:net';
import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { provision, rawSession, waitForEmails } from '../helpers/smtp.js';

const refused = (port: number) => new Promise<boolean>((resolve) => {
  const s = connect(port, '127.0.0.1');
  s.once('connect', () => { s.destroy(); resolve(false); });
  s.once('error', () => resolve(true));
});

test('stop finishes a transaction in DATA (250 after its commit), refuses new connections, then ends idle sessions', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'stop.test', ['last']);
  const busy = await rawSession(app.smtpPort);
  const idle = await rawSession(app.smtpPort);
  t.teardown(() => { busy.close(); idle.close(); });
  await idle.command('EHLO idle.example');
  await busy.command('EHLO client.example');
  await busy.command('MAIL FROM:<x@example.org>');
  await busy.command('RCPT TO:<last@stop.test>');
  t.regex(await busy.command('DATA'), /^354 /);
  busy.write('Subject: in flight\r\nMessage-ID: <inflight-1@example.org>\r\n\r\nfirst half, ');

  const stopped = app.stop();
  const deadline = Date.now() + 5_000;
  while (!(await refused(app.smtpPort)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.true(await refused(app.smtpPort), 'no new connections once stopping');

  busy.write('second half\r\n');
  t.regex(await busy.command('.'), /^250 2\.0\.0 /, 'the message in flight is received and acknowledged');
  t.regex(await busy.command('MAIL FROM:<x@example.org>'), /^421 /, 'no new transaction starts');
  await stopped;
  t.regex(await idle.reply(), /^421 4\.3\.2 /, 'the idle session was told and closed');
  await t.throwsAsync(idle.command('NOOP'));

  // The acknowledged message survived the stop: a restart on the same data stores it.
  const again = await startTestApp(t, { dataDir: app.dataDir });
  const [item] = await waitForEmails(again, key, 1);
  t.is(item.subject, 'in flight');
  const e = (await again.get(`/v1/emails/${item.id}`, key)).body.data;
  t.is(e.body_text, 'first half, second half\n');
});
