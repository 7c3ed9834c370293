import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { makeInbox } from '../helpers/emails.js';
import { rawImap } from '../helpers/imap.js';
import { putScript, rawSieve } from './client.js';

const PASSWORD = 'password-123';
const FILE = 'require ["fileinto"];\r\nif header :contains "subject" "report" {\r\n  fileinto "Reports";\r\n}\r\n';

test('greeting and CAPABILITY: implementation, SIEVE extensions, STARTTLS before TLS and PLAIN after it', async (t) => {
  const app = await startTestApp(t);
  const c = await rawSieve(t, app.managesievePort);
  const greeting = await c.response();
  t.regex(greeting, /^"IMPLEMENTATION" "Mailstead"\r\n/m);
  t.regex(greeting, /^"SIEVE" "[^"]*\bfileinto\b[^"]*\bvacation\b[^"]*"\r\n/m);
  t.notRegex(greeting, /\binclude\b/);
  t.regex(greeting, /^"STARTTLS"\r\n/m);
  t.regex(greeting, /^"VERSION" "1.0"\r\n/m);
  t.regex(greeting, /^"SASL" ""\r\n/m);
  t.regex(greeting, /^OK /m);
  const afterTls = await c.starttls();
  t.regex(afterTls, /^"SASL" "PLAIN"\r\n/m);
  t.notRegex(afterTls, /"STARTTLS"/);
  t.regex(afterTls, /^OK /m);
  t.regex(await c.command('CAPABILITY\r\n'), /^"IMPLEMENTATION" "Mailstead"[\s\S]*^OK/m);
  t.regex(await c.command('NOOP "tag-1"\r\n'), /^OK \(TAG "tag-1"\)/);
  t.regex(await c.command('LOGOUT\r\n'), /^OK/);
});

test('AUTHENTICATE: refused before STARTTLS, wrong password NO, then PLAIN with an initial response or after the challenge', async (t) => {
  const app = await startTestApp(t);
  const { address } = await makeInbox(app);
  const c = await rawSieve(t, app.managesievePort);
  await c.response();
  t.regex(await c.login(address, PASSWORD), /^NO \(ENCRYPT-NEEDED\)/);
  t.regex(await c.command('LISTSCRIPTS\r\n'), /^NO/);
  await c.starttls();
  t.regex(await c.login(address, 'wrong-password'), /^NO/);
  // The PLAIN exchange with the empty challenge and a literal response.
  c.send('AUTHENTICATE "PLAIN"\r\n');
  const b64 = Buffer.from(`\0${address}\0${PASSWORD}`).toString('base64');
  c.send(`{${b64.length}+}\r\n${b64}\r\n`);
  const done = await c.response();
  t.regex(done, /^""\r\nOK/m);
  t.regex(await c.command('LISTSCRIPTS\r\n'), /^OK/);
  t.regex(await c.command('UNAUTHENTICATE\r\n'), /^OK/);
  t.regex(await c.command('LISTSCRIPTS\r\n'), /^NO/);
  t.regex(await c.login(address.toUpperCase(), PASSWORD), /^OK/);
});

test('script commands: PUTSCRIPT with {n+} and {n}, LISTSCRIPTS, SETACTIVE, GETSCRIPT, RENAMESCRIPT, DELETESCRIPT, HAVESPACE, CHECKSCRIPT', async (t) => {
  const app = await startTestApp(t);
  const { key, address } = await makeInbox(app);
  const c = await rawSieve(t, app.managesievePort);
  await c.response();
  await c.starttls();
  t.regex(await c.login(address, PASSWORD), /^OK/);

  t.regex(await c.command('HAVESPACE "filters" 1000\r\n'), /^OK/);
  t.regex(await c.command('HAVESPACE "filters" 100000\r\n'), /^NO \(QUOTA\/MAXSIZE\)/);
  t.regex(await c.command(putScript('filters', FILE)), /^OK/);
  t.regex(await c.command(putScript('second', 'keep;\r\n', true)), /^OK/);
  t.regex(await c.command('PUTSCRIPT "quoted" "discard;"\r\n'), /^OK/);
  t.is(await c.command('LISTSCRIPTS\r\n'), '"filters"\r\n"quoted"\r\n"second"\r\nOK "Listscripts completed"\r\n');
  t.regex(await c.command('SETACTIVE "filters"\r\n'), /^OK/);
  t.regex(await c.command('LISTSCRIPTS\r\n'), /^"filters" ACTIVE\r\n/);
  t.regex(await c.command('SETACTIVE "missing"\r\n'), /^NO \(NONEXISTENT\)/);

  const got = await c.command('GETSCRIPT "filters"\r\n');
  t.is(got, `{${Buffer.byteLength(FILE)}}\r\n${FILE}\r\nOK "Getscript completed"\r\n`);
  t.regex(await c.command('GETSCRIPT "missing"\r\n'), /^NO \(NONEXISTENT\)/);

  t.regex(await c.command('DELETESCRIPT "filters"\r\n'), /^NO \(ACTIVE\)/);
  t.regex(await c.command('RENAMESCRIPT "filters" "second"\r\n'), /^NO \(ALREADYEXISTS\)/);
  t.regex(await c.command('RENAMESCRIPT "filters" "main"\r\n'), /^OK/);
  t.regex(await c.command('LISTSCRIPTS\r\n'), /^"main" ACTIVE\r\n/);
  t.regex(await c.command('DELETESCRIPT "quoted"\r\n'), /^OK/);
  t.regex(await c.command('DELETESCRIPT "quoted"\r\n'), /^NO \(NONEXISTENT\)/);

  t.regex(await c.command('CHECKSCRIPT "keep;"\r\n'), /^OK/);
  const bad = 'require ["fileinto"];\r\nfileinto "x"\r\n';
  t.regex(await c.command(`CHECKSCRIPT {${bad.length}+}\r\n${bad}\r\n`), /^NO (\{\d+\}\r\n)?"?line \d+, column \d+: /);
  const refused = await c.command(putScript('broken', 'keep;\r\nif true {\r\n'));
  t.regex(refused, /^NO (\{\d+\}\r\n)?"?line 3, column \d+/);
  t.regex(await c.command('SETACTIVE ""\r\n'), /^OK/);
  t.regex(await c.command('LISTSCRIPTS\r\n'), /^"main"\r\n"second"\r\nOK/);

  // The same scripts over REST.
  const list = await app.get(`/v1/mailboxes/${encodeURIComponent(address)}/sieve`, key);
  t.deepEqual(list.body.data.map((s: any) => s.name), ['main', 'second']);
  t.regex(await c.command('LOGOUT\r\n'), /^OK/);
});

test('MAXSCRIPTS: an eleventh script is refused with QUOTA/MAXSCRIPTS', async (t) => {
  const app = await startTestApp(t);
  const { address } = await makeInbox(app);
  const c = await rawSieve(t, app.managesievePort);
  await c.response();
  await c.starttls();
  await c.login(address, PASSWORD);
  for (let i = 0; i < 10; i++) t.regex(await c.command(putScript(`s${i}`, 'keep;')), /^OK/);
  t.regex(await c.command(putScript('s10', 'keep;')), /^NO \(QUOTA\/MAXSCRIPTS\)/);
  t.regex(await c.command('HAVESPACE "s10" 10\r\n'), /^NO \(QUOTA\/MAXSCRIPTS\)/);
});

test('malformed input is answered NO and the session goes on; an oversized literal ends it with BYE', async (t) => {
  const app = await startTestApp(t);
  const c = await rawSieve(t, app.managesievePort);
  await c.response();
  t.regex(await c.command('FROBNICATE\r\n'), /^NO/);
  t.regex(await c.command('"unterminated\r\n'), /^NO/);
  t.regex(await c.command('NOOP "a\\q"\r\n'), /^NO/);
  t.regex(await c.command('CAPABILITY extra\r\n'), /^NO/);
  t.regex(await c.command('NOOP\r\n'), /^OK/);
  t.regex(await c.command('PUTSCRIPT "x" {999999999+}\r\n'), /^BYE/);
});

test('the login lock-out is shared with IMAP: ten wrong passwords over ManageSieve lock the address out of both', async (t) => {
  const app = await startTestApp(t);
  const { address } = await makeInbox(app);
  const c = await rawSieve(t, app.managesievePort);
  await c.response();
  await c.starttls();
  for (let i = 0; i < 10; i++) t.regex(await c.login(address, `wrong-${i}`), /^NO \(SASL\)/);
  t.regex(await c.login(address, PASSWORD), /^NO \(TRYLATER\)/);
  const imap = await rawImap(t, app.imapPort);
  await imap.until(/^\* OK/);
  imap.send(`a LOGIN ${address} ${PASSWORD}\r\n`);
  t.regex(await imap.until(/^a /m), /^a NO \[UNAVAILABLE\]/m);
});
