import test from 'ava';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { imapApp } from '../helpers/imap.js';
import { exchange, loggedIn, open, prng, stillServes, tagged, waitFor, type Wire } from './fuzz-wire.js';

/*
 * IDLE and DONE in every order a client (or the network) can put them: DONE before the
 * continuation, DONE in one packet with the commands after it, DONE split byte by byte, something
 * else instead of DONE, mail arriving while idling and as DONE is sent, the client vanishing while
 * idling. Every IDLE ends in its tagged answer or the connection's end, the commands after it run,
 * and a real client is served afterwards.
 */

test('IDLE and DONE races on one connection: every order gets its answers', async (t) => {
  t.timeout(90_000);
  const { app, box, imapPort } = await imapApp(t);
  await deliver(app, box.key, box.address, { subject: 'first' });
  await waitForEmails(app, box.key, 1);
  const c = await loggedIn(imapPort, box.address, { select: true });
  const expect = async (bytes: string | Array<string | Buffer>, answers: RegExp[], label: string) => {
    const from = c.text.length;
    for (const part of Array.isArray(bytes) ? bytes : [bytes]) c.socket.write(part);
    for (const re of answers) t.true(await waitFor(c, re, from, 15_000), `${label}: ${re} in ${JSON.stringify(c.text.slice(from, from + 400))}`);
  };
  await expect('a1 IDLE\r\nDONE\r\n', [/^\+ idling/m, /^a1 OK IDLE terminated/m], 'DONE before the continuation');
  await expect('a2 IDLE\r\nDONE\r\nb1 NOOP\r\na3 IDLE\r\nDONE\r\nb2 FETCH 1 (FLAGS)\r\n', [/^a2 OK[^]*^b1 OK[^]*^a3 OK[^]*^\* 1 FETCH[^]*^b2 OK/m], 'DONE among commands in one packet');
  await expect('a4 IDLE\r\nb3 NOOP\r\nb4 NOOP\r\n', [/^a4 BAD DONE expected[^]*^b4 OK/m], 'a command instead of DONE');
  await expect(['a5 IDLE\r\n', 'D', 'O', 'N', 'E', '\r', '\n', 'b5 NOOP\r\n'], [/^a5 OK[^]*^b5 OK/m], 'DONE byte by byte');
  for (const [i, done] of ['done', 'DONE ', ' DONE', 'DONE\0', 'DONE x', '', '*', 'DONE {3}\r\nabc', 'DONE {3+}\r\nabc', '\xff\xfe', 'DONE'.repeat(5000)].entries()) {
    const tag = `d${i}`;
    await expect([`${tag} IDLE\r\n`, Buffer.from(`${done}\r\n`, 'latin1'), `e${i} NOOP\r\n`], [tagged(tag), tagged(`e${i}`)], `IDLE ended by ${JSON.stringify(done.slice(0, 20))}`);
  }
  await expect('a6 IDLE x\r\na7 IDLE\r\n', [/^a6 BAD/m, /^\+ idling/m], 'IDLE with an argument');
  await deliver(app, box.key, box.address, { subject: 'while idling' });
  await expect('', [/^\* 2 EXISTS/m], 'mail announced while idling');
  await expect('DONE\r\n', [/^a7 OK/m], 'DONE after the announcement');

  // Mail arriving just as DONE goes: announced before the tagged OK or at the next command, never lost.
  for (let i = 0; i < 5; i++) {
    await expect(`r${i} IDLE\r\n`, [/^\+ idling/m], 'idle');
    const from = c.text.length;
    const arriving = deliver(app, box.key, box.address, { subject: `race ${i}` });
    c.socket.write('DONE\r\n');
    await arriving;
    t.true(await waitFor(c, tagged(`r${i}`), from, 15_000), 'DONE as mail arrives');
  }
  await waitForEmails(app, box.key, 7);
  await expect('n1 NOOP\r\n', [/^n1 OK/m], 'NOOP');
  t.regex(c.text, /^\* 7 EXISTS/m, 'every arrival announced in the end');

  const before = await open(imapPort);
  t.is(await exchange(before, 'p1 IDLE\r\n', 'p1'), 'answered');
  t.regex(before.text, /^p1 BAD log in first/m, 'no IDLE before login');
  before.socket.destroy();
  c.socket.destroy();
});

test('a seeded campaign of idling clients that vanish, race DONE with mail and commands, and come back', async (t) => {
  t.timeout(120_000);
  const { app, box, imapPort } = await imapApp(t);
  await deliver(app, box.key, box.address, { subject: 'seed' });
  await waitForEmails(app, box.key, 1);
  const r = prng(31);
  const deadline = Date.now() + 30_000;
  const stats = { rounds: 0, vanished: 0, answered: 0, delivered: 0 };
  const deliveries: Array<Promise<unknown>> = [];
  // Three clients side by side, each its own seeded sequence of IDLE rounds.
  const client = async (id: number) => {
    let c: Wire = await loggedIn(imapPort, box.address, { select: r() < 0.8 });
    for (let round = 0; round < 60 && Date.now() < deadline; round++) {
      stats.rounds++;
      const tag = `c${id}r${round}`;
      const k = r();
      if (r() < 0.3 && stats.delivered < 25) { stats.delivered++; deliveries.push(deliver(app, box.key, box.address, { subject: `campaign ${id}.${round}` })); }
      if (k < 0.15 || round === 1) {
        // Vanish while idling (reset or FIN), then come back.
        const at = c.text.length;
        c.socket.write(`${tag} IDLE\r\n`);
        if (r() < 0.5) await waitFor(c, /^\+ idling/m, at, 5000);
        if (r() < 0.5) c.socket.destroy(); else c.socket.end();
        stats.vanished++;
        c = await loggedIn(imapPort, box.address, { select: true });
        continue;
      }
      const done = ['DONE\r\n', 'done\r\n', 'DONE\r\nx NOOP\r\n', 'y NOOP\r\n', 'DONE\r\nz IDLE\r\nDONE\r\n'][Math.floor(r() * 5)]!;
      const whole = r() < 0.5;
      const from = c.text.length;
      if (whole) c.socket.write(`${tag} IDLE\r\n${done}`);
      else {
        c.socket.write(`${tag} IDLE\r\n`);
        await waitFor(c, /^\+ idling/m, from, 10_000);
        c.socket.write(done);
      }
      t.is(await exchange(c, '', tag, { label: `round ${round} of client ${id}: IDLE then ${JSON.stringify(done)}` }), 'answered');
      // What followed DONE in the packet runs too.
      if (done.includes('z IDLE')) t.true(await waitFor(c, /^z OK/m, from, 15_000), 'the second IDLE of the packet ended');
      else if (done.startsWith('DONE\r\nx')) t.true(await waitFor(c, /^x OK/m, from, 15_000), 'the NOOP after DONE ran');
      stats.answered++;
    }
    c.socket.destroy();
  };
  await Promise.all([client(1), client(2), client(3)]);
  await Promise.all(deliveries);
  t.log(stats);
  t.true(stats.rounds >= 10 && stats.answered > 0 && stats.vanished > 0);

  await deliver(app, box.key, box.address, { subject: 'after idling' });
  await stillServes(t, app, imapPort, box.address, 'after idling');
});
