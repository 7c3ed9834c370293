import { once } from 'node:events';
import test from 'ava';
import { submissionApp } from './world.js';
import { authed, cmd, openSmtp, prng, replies, stillSubmits, subjectListed, type Smtp } from './fuzz-wire.js';

/*
 * The envelope under fuzz: MAIL FROM with BODY=8BITMIME and SMTPUTF8 and every malformed parameter,
 * UTF-8, invalid UTF-8 and NUL in addresses, RCPT edge cases, and PIPELINING floods of hundreds of
 * commands in one write, logged in and not. Every command gets its one reply, nothing is accepted
 * without a login, and a real client submits after.
 */

const BUDGET_MS = 20_000;

function envelopeLine(r: () => number, own: string, domain: string): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const local = own.slice(0, own.indexOf('@'));
  const addresses = [own, own.toUpperCase(), `${local}@${domain.toUpperCase()}`, 'üser@' + domain, `${local}\xff\xfe@${domain}`, `${local}\0@${domain}`, `\xc3@${domain}`,
    '', 'a@b', '@' + domain, local, `"quoted local"@${domain}`, `${'a'.repeat(64)}@${domain}`, `${'a'.repeat(1000)}@${domain}`, `${own}>`, `<${own}`, `${local}@[127.0.0.1]`,
    `${local}@${domain}.`, `𝓊@${domain}`, `${local}@xn--bcher-kva.example`, `${local}@bücher.example`, 'postmaster', `${local}@${domain}\r`];
  const params = ['BODY=8BITMIME', 'BODY=7BIT', 'SMTPUTF8', 'BODY=8BITMIME SMTPUTF8', 'BODY=8bitmime', 'BODY=', 'BODY', 'BODY=BINARYMIME', 'BODY=8BITMIME BODY=7BIT',
    'SMTPUTF8=yes', 'SIZE=1', 'SIZE=99999999999', 'SIZE=-1', 'SIZE=abc', 'SIZE=26214401', 'RET=FULL', 'ENVID=x', 'AUTH=<>', 'FOO=BAR', '\0', 'BODY=8BITMIME\xff', 'X'.repeat(600),
    'NOTIFY=NEVER', 'ORCPT=rfc822;x@y'];
  const verb = pick(['MAIL FROM:', 'MAIL FROM: ', 'mail from:', 'MAIL FROM', 'RCPT TO:', 'RCPT TO: ', 'rcpt to:', 'RCPT TO']);
  const address = pick(addresses);
  const wrapped = r() < 0.85 ? `<${address}>` : address;
  const extra = r() < 0.6 ? ` ${pick(params)}${r() < 0.3 ? ` ${pick(params)}` : ''}` : '';
  return `${verb}${wrapped}${extra}`;
}

const OTHER = ['RSET', 'NOOP', 'DATA', 'EHLO again.test', 'HELO x', 'VRFY x', 'EXPN x', 'HELP', 'BDAT 10 LAST', 'STARTTLS', 'TURN', 'ETRN x', '', ' ', 'MAIL', 'RCPT', 'QUIT'];

test('MAIL and RCPT with 8BITMIME, SMTPUTF8 and malformed parameters and addresses, pipelined in floods', async (t) => {
  t.timeout(120_000);
  const { app, box } = await submissionApp(t);
  const r = prng(51);
  let c: Smtp = await authed(app, box);
  const deadline = Date.now() + BUDGET_MS;
  const stats = { floods: 0, commands: 0, accepted: 0, closed: 0 };
  for (let i = 0; i < 200 && Date.now() < deadline; i++) {
    // A flood: 1 to 400 commands in one write; DATA is left out (its 354 would turn the rest into a message).
    const n = r() < 0.7 ? 1 + Math.floor(r() * 10) : 100 + Math.floor(r() * 300);
    const lines: string[] = [];
    for (let k = 0; k < n; k++) lines.push(r() < 0.85 ? envelopeLine(r, box.address, box.domain) : OTHER.filter((x) => x !== 'DATA')[Math.floor(r() * (OTHER.length - 1))]!);
    c.socket.write(Buffer.from(lines.map((l) => `${l}\r\n`).join(''), 'latin1'));
    const got = await replies(c, n, 60_000);
    stats.floods++;
    stats.commands += got.length;
    stats.accepted += got.filter((x) => x.startsWith('250 Accepted')).length;
    const quitAt = lines.indexOf('QUIT');
    if (quitAt >= 0 && got.length === quitAt + 1) t.regex(got[quitAt]!, /^221/);
    if (c.closed || c.farewell) { stats.closed++; c.socket.destroy(); c = await authed(app, box); } else t.regex((await cmd(c, 'RSET')) ?? '', /^250/);
  }
  c.socket.destroy();
  t.log(stats);
  t.true(stats.floods >= 5 && stats.accepted > 0);

  // Explicit cases: what is accepted, and what is refused, with 8BITMIME and SMTPUTF8.
  const d = await authed(app, box);
  t.regex((await cmd(d, `MAIL FROM:<${box.address}> BODY=8BITMIME SMTPUTF8`)) ?? '', /^250/);
  t.regex((await cmd(d, `RCPT TO:<${box.address}>`)) ?? '', /^250/);
  t.regex((await cmd(d, 'RSET')) ?? '', /^250/);
  t.regex((await cmd(d, `MAIL FROM:<${box.address}> BODY=BINARYMIME`)) ?? '', /^5\d\d/);
  t.regex((await cmd(d, Buffer.from(`MAIL FROM:<\xff${box.address}> SMTPUTF8`, 'latin1'))) ?? '', /^5\d\d/);
  t.regex((await cmd(d, Buffer.from(`MAIL FROM:<${box.address}\0>`, 'latin1'))) ?? '', /^5\d\d/);
  t.regex((await cmd(d, `MAIL FROM:<üser@${box.domain}> SMTPUTF8`)) ?? '', /^553 5\.7\.1/, 'a UTF-8 address the login may not send as');
  d.socket.destroy();

  await stillSubmits(t, app, box, 'after envelope floods');
});

test('a pipelined transaction without a login is never accepted; with one, a whole pipelined transaction is', async (t) => {
  t.timeout(90_000);
  const { app, box } = await submissionApp(t);
  const message = (subject: string) => `From: <${box.address}>\r\nTo: <${box.address}>\r\nSubject: ${subject}\r\n\r\nbody\r\n.\r\n`;
  for (const [port, implicit] of [[app.submissionsPort, true], [app.submissionPort, false]] as const) {
    const c = await openSmtp(port, implicit);
    await cmd(c, 'EHLO fuzz.test');
    const subject = `open relay attempt ${port}`;
    c.socket.write(`MAIL FROM:<${box.address}>\r\nRCPT TO:<${box.address}>\r\nDATA\r\n${message(subject)}QUIT\r\n`);
    const got = await replies(c, 3, 20_000).catch((err: Error) => [err.message]);
    t.true(got.slice(0, 3).every((x) => /^(530|421)/.test(x)), `MAIL, RCPT and DATA refused: ${JSON.stringify(got)}`);
    // Whatever the rest is read as, it is never a message: nothing after this point is a 250 or a 354.
    // The connection's close is the signal that every reply to the pipelined lines has been read.
    c.socket.end();
    if (!c.socket.closed) await once(c.socket, 'close');
    t.notRegex(c.text, /^(250 .*queued|354)/m, `nothing accepted without a login on ${implicit ? 'implicit TLS' : 'STARTTLS'}`);
  }
  const ok = await authed(app, box);
  ok.socket.write(`MAIL FROM:<${box.address}> BODY=8BITMIME SMTPUTF8\r\nRCPT TO:<${box.address}>\r\nDATA\r\n${message('pipelined whole')}`);
  const got = await replies(ok, 4);
  t.regex(got[0]!, /^250/);
  t.regex(got[1]!, /^250/);
  t.regex(got[2]!, /^354/);
  t.regex(got[3]!, /^250 .*queued/);
  t.true(await subjectListed(app, box, 'pipelined whole'), 'the pipelined message is stored');
  ok.socket.destroy();
  // Stored after the attempts without a login, which are not.
  for (const port of [app.submissionsPort, app.submissionPort]) t.false(await subjectListed(app, box, `open relay attempt ${port}`, 0), 'nothing stored without a login');
});
