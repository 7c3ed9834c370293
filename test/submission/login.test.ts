import test from 'ava';
import { lineSession, PASSWORD, plainToken, submissionApp, transport } from './world.js';

test('EHLO on the STARTTLS port offers AUTH only after STARTTLS; AUTH and MAIL before it get 530 5.7.0', async (t) => {
  const { app, box } = await submissionApp(t);
  const s = await lineSession(t, app.submissionPort, false);
  t.regex(s.greeting, /^220 /);
  const before = await s.cmd('EHLO client.test');
  t.regex(before, /STARTTLS/);
  t.notRegex(before, /AUTH/, 'no AUTH in clear text');
  t.regex(before, /SIZE 26214400/);
  t.regex(await s.cmd(`AUTH PLAIN ${plainToken(box.address, PASSWORD)}`), /^530 5\.7\.0 /);
  t.regex(await s.cmd(`MAIL FROM:<${box.address}>`), /^530 5\.7\.0 /);
  await s.starttls();
  const after = await s.cmd('EHLO client.test');
  t.regex(after, /AUTH PLAIN LOGIN/);
  t.notRegex(after, /STARTTLS/);
  t.regex(await s.cmd(`MAIL FROM:<${box.address}>`), /^530 5\.7\.0 /, 'MAIL without AUTH');
  t.regex(await s.cmd(`AUTH PLAIN ${plainToken(box.address.toUpperCase(), PASSWORD)}`), /^235 /, 'address case-insensitive');
});

test('the implicit-TLS port offers AUTH at once and takes PLAIN and LOGIN', async (t) => {
  const { app, box } = await submissionApp(t);
  const s = await lineSession(t, app.submissionsPort, true);
  const ehlo = await s.cmd('EHLO client.test');
  t.regex(ehlo, /AUTH PLAIN LOGIN/);
  t.notRegex(ehlo, /STARTTLS/);
  t.regex(await s.cmd('AUTH LOGIN'), /^334 /);
  t.regex(await s.cmd(Buffer.from(box.address).toString('base64')), /^334 /);
  t.regex(await s.cmd(Buffer.from(PASSWORD).toString('base64')), /^235 /);
});

test('nodemailer logs in on both ports with PLAIN and LOGIN', async (t) => {
  const { app, box } = await submissionApp(t);
  for (const port of ['starttls', 'implicit'] as const) {
    for (const method of ['PLAIN', 'LOGIN'] as const) {
      const tr = transport(app, port, box.address, PASSWORD, method);
      t.true(await tr.verify(), `${port} ${method}`);
      tr.close();
    }
  }
});

test('a wrong password, an unknown address, a deleted mailbox and a foreign authorization identity get 535 5.7.8', async (t) => {
  const { app, box } = await submissionApp(t, { count: 2 });
  const other = box.mailboxes[1].address;
  const refused = async (user: string, pass: string) => {
    const tr = transport(app, 'implicit', user, pass);
    const err = await t.throwsAsync(tr.verify()) as Error & { responseCode?: number; response?: string };
    tr.close();
    return err;
  };
  const wrong = await refused(box.address, 'not-the-password');
  t.is(wrong.responseCode, 535);
  t.regex(wrong.response ?? '', /^535 5\.7\.8 /);
  t.is((await refused(`nobody@${box.domain}`, PASSWORD)).responseCode, 535);

  const del = await app.post('/v1/delete/mailbox/bulk', box.key, { Domain: box.domain, Mailboxes: [other] });
  t.is(del.status, 200, JSON.stringify(del.body));
  const done = await app.pollTask('/v1/get/delete/mailbox/bulk', box.key, del.body.task_id);
  t.is(done.body.status, 'completed', JSON.stringify(done.body));
  t.is((await refused(other, PASSWORD)).responseCode, 535, 'a deleted mailbox no longer logs in');

  const s = await lineSession(t, app.submissionsPort, true);
  await s.cmd('EHLO client.test');
  t.regex(await s.cmd(`AUTH PLAIN ${plainToken(box.address, PASSWORD, other)}`), /^535 5\.7\.8 /, 'authzid of another mailbox');
});

test('malformed AUTH payloads get clear replies and no login', async (t) => {
  const { app, box } = await submissionApp(t);
  const s = await lineSession(t, app.submissionsPort, true);
  await s.cmd('EHLO client.test');
  t.regex(await s.cmd('AUTH PLAIN not*base64'), /^501 /);
  t.regex(await s.cmd(`AUTH PLAIN ${Buffer.from('only-one-part').toString('base64')}`), /^501 /);
  t.regex(await s.cmd('AUTH CRAM-MD5'), /^504 /);
  t.regex(await s.cmd('AUTH LOGIN'), /^334 /);
  t.regex(await s.cmd('*'), /^501 /, 'cancelled');
  t.regex(await s.cmd(`MAIL FROM:<${box.address}>`), /^530 5\.7\.0 /, 'still not logged in');
});
