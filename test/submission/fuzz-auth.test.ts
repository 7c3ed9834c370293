import test from 'ava';
import { plainToken, submissionApp, PASSWORD } from './world.js';
import { cmd, openSmtp, prng, replies, startTls, stillSubmits, type Smtp } from './fuzz-wire.js';

/*
 * AUTH garbage on both submission ports: PLAIN with NULs in the wrong places, bad base64, huge
 * lines, LOGIN continuations answered with anything, AUTH in clear text where TLS comes first.
 * Every line gets a well-formed reply (or the connection ends after a 421/221), no wrong
 * password ever logs in, nothing is accepted without a login, and a real client submits after.
 */

const BUDGET_MS = 25_000;
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

/** The lines of one hostile AUTH exchange; `user` is a real address, so near-miss passwords are tried too. */
function authInput(r: () => number, user: string): string[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(r() * 256)));
  const near = [`${PASSWORD}\0`, PASSWORD.toUpperCase(), PASSWORD.slice(0, -1), '', `${PASSWORD} `, `\0${PASSWORD}`, `${PASSWORD}\xff`, 'x'.repeat(2000)];
  const parts = [user, user.toUpperCase(), `${user}\0`, '', 'nobody@x.test', pick(near), bytes(8).toString('latin1'), '\0', 'ü@ü.test', 'a'.repeat(400)];
  const garbage = () => pick(['*', '', '=', '====', 'a', '!!!', 'YW Jj', '\xff\xfe', 'A'.repeat(5000), 'QUIT', 'AUTH LOGIN', 'AUTH PLAIN', '.', b64(bytes(20)),
    b64('\0\0'), b64(`${user}\0${pick(near)}`), `${b64(user)}=`, `${b64(user)}====`, b64(user).slice(1), `  ${b64(user)}`, 'Kg==']);
  const plain = () => {
    // authzid NUL authcid NUL password, with NULs missing, doubled or moved.
    const n = 1 + Math.floor(r() * 5);
    const fields = Array.from({ length: n }, (_, i) => (i === 1 ? user : i === 2 ? pick(near) : pick(parts)));
    return b64(Buffer.from(fields.join(pick(['\0', '\0', '\0\0', '', ' '])), 'latin1'));
  };
  switch (Math.floor(r() * 9)) {
    case 0: return [`AUTH PLAIN ${plain()}`];
    case 1: return ['AUTH PLAIN', plain()];
    case 2: return ['AUTH PLAIN', garbage()];
    case 3: return [`AUTH PLAIN ${garbage()}`];
    case 4: return ['AUTH LOGIN', r() < 0.5 ? b64(Buffer.from(pick(parts), 'latin1')) : garbage(), r() < 0.5 ? b64(Buffer.from(pick(near), 'latin1')) : garbage()];
    case 5: return [`AUTH LOGIN ${r() < 0.5 ? b64(user) : garbage()}`, r() < 0.5 ? b64(pick(near)) : garbage()];
    case 6: return ['AUTH LOGIN', garbage()];
    case 7: return [pick(['AUTH', 'AUTH CRAM-MD5', 'AUTH XOAUTH2 abc', 'auth plain', `auth login ${b64(user)}`, 'AUTH PLAIN a b c', 'AUTH  PLAIN', `AUTH PLAIN ${plainToken(user, PASSWORD)} extra`, 'AUTH \0', 'AUTH PLAIN\0'])];
    default: return [`AUTH ${pick(['PLAIN', 'LOGIN'])} ${'A'.repeat(pick([510, 1000, 10_000, 70_000]))}`];
  }
}

test('AUTH garbage on the implicit-TLS port: every line answered, no wrong password logs in, nothing accepted without a login', async (t) => {
  t.timeout(120_000);
  const { app, box } = await submissionApp(t);
  const r = prng(41);
  let address = 10;
  const connect = async () => {
    // A fresh 127.0.0.x each time: the lock-out of one address (ten failures) would otherwise answer every later attempt.
    const c = await openSmtp(app.submissionsPort, true, `127.0.0.${address++ % 240 + 10}`);
    await cmd(c, 'EHLO fuzz.test');
    return c;
  };
  let c: Smtp = await connect();
  const deadline = Date.now() + BUDGET_MS;
  const stats = { inputs: 0, lines: 0, closed: 0, refusedLogins: 0 };
  for (let i = 0; i < 600 && Date.now() < deadline; i++) {
    const lines = authInput(r, box.address);
    c.socket.write(Buffer.from(lines.map((l) => `${l}\r\n`).join(''), 'latin1'));
    const got = await replies(c, lines.length);
    stats.inputs++;
    stats.lines += lines.length;
    for (const reply of got) {
      t.false(reply.startsWith('235'), `no login from ${JSON.stringify(lines).slice(0, 300)}`);
      if (/^535 /.test(reply)) stats.refusedLogins++;
    }
    if (!c.closed && !c.farewell) {
      // Whatever state the input left (a 334 waiting), the session answers, and MAIL is still refused.
      const probe = await cmd(c, 'AUTH X-FUZZ');
      const mail = probe === null ? null : await cmd(c, `MAIL FROM:<${box.address}>`);
      if (mail !== null) t.regex(mail, /^(530|501|503|421)/, `no transaction without a login after ${JSON.stringify(lines).slice(0, 300)}`);
    }
    if (c.closed || c.farewell) { stats.closed++; c.socket.destroy(); c = await connect(); }
  }
  c.socket.destroy();
  t.log(stats);
  t.true(stats.inputs >= 20 && stats.refusedLogins > 0);
  await stillSubmits(t, app, box, 'after auth garbage');
});

test('AUTH on the STARTTLS port before STARTTLS is refused whatever its form, and never enters a continuation', async (t) => {
  t.timeout(90_000);
  const { app, box } = await submissionApp(t);
  const r = prng(42);
  let c: Smtp = await openSmtp(app.submissionPort, false);
  await cmd(c, 'EHLO fuzz.test');
  const deadline = Date.now() + 15_000;
  let inputs = 0;
  for (let i = 0; i < 300 && Date.now() < deadline; i++) {
    const lines = authInput(r, box.address);
    c.socket.write(Buffer.from(lines.map((l) => `${l}\r\n`).join(''), 'latin1'));
    const got = await replies(c, lines.length);
    inputs++;
    // The AUTH line itself is 530 5.7.0 (or a 421/500 for a line no command fits); what follows it is read as commands.
    if (got[0] && /^AUTH /i.test(lines[0]!) && lines[0]!.length < 500) t.regex(got[0], /^(530 5\.7\.0|421|500|501)/, `clear-text ${JSON.stringify(lines[0]).slice(0, 100)}`);
    for (const reply of got) t.false(/^(334|235)/.test(reply), `no continuation or login in clear text: ${JSON.stringify(lines).slice(0, 200)} -> ${reply}`);
    if (c.closed || c.farewell) { c.socket.destroy(); c = await openSmtp(app.submissionPort, false); await cmd(c, 'EHLO fuzz.test'); }
  }
  t.true(inputs >= 20);
  c.socket.destroy();
  // A connection of the same address still upgrades, and then offers AUTH.
  const d = await openSmtp(app.submissionPort, false);
  await cmd(d, 'EHLO fuzz.test');
  await startTls(d);
  t.regex((await cmd(d, 'EHLO fuzz.test')) ?? '', /AUTH PLAIN LOGIN/);
  d.socket.destroy();
  await stillSubmits(t, app, box, 'after clear-text auth');
});

test('the password with trailing NULs does not log in (scrypt\'s HMAC pads its key with zero bytes, so it hashed as the password)', async (t) => {
  const { app, box } = await submissionApp(t);
  const c = await openSmtp(app.submissionsPort, true, '127.0.0.4');
  await cmd(c, 'EHLO fuzz.test');
  for (const tail of ['\0', '\0\0']) {
    t.regex((await cmd(c, 'AUTH LOGIN')) ?? '', /^334 /);
    t.regex((await cmd(c, b64(box.address))) ?? '', /^334 /);
    t.regex((await cmd(c, b64(`${PASSWORD}${tail}`))) ?? '', /^535 5\.7\.8 /, JSON.stringify(tail));
  }
  t.regex((await cmd(c, `AUTH PLAIN ${plainToken(box.address, PASSWORD)}`)) ?? '', /^235 /, 'the password itself still does');
  c.socket.destroy();
});
