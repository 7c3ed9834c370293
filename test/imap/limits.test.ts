import test from 'ava';
import net from 'node:net';
import { MAX_CONNECTIONS_PER_IP } from '../../src/imap/protocol/server.js';
import { imapApp, PASSWORD, rawImap, type RawImap } from '../helpers/imap.js';
import { lastCheck } from '../helpers/poll.js';

/** A plain connection to the STARTTLS port that collects what the server says until it closes. */
function plainGreeting(port: number, timeoutMs = 15_000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let text = '';
    const done = (closed: boolean) => { clearTimeout(guard); s.destroy(); resolve({ text, closed }); };
    const guard = setTimeout(() => done(false), timeoutMs);
    s.on('data', (d) => { text += d.toString('latin1'); });
    s.on('error', () => undefined);
    s.on('close', () => done(true));
  });
}

test('one address holds at most 50 connections across both listeners; the next gets BYE, and a freed slot serves again', async (t) => {
  t.timeout(120_000);
  const { box, imapPort, imapStarttlsPort } = await imapApp(t);
  t.is(MAX_CONNECTIONS_PER_IP, 50);
  const open: RawImap[] = [];
  for (let i = 0; i < MAX_CONNECTIONS_PER_IP; i++) open.push(await rawImap(t, i % 2 ? imapPort : imapStarttlsPort, { secure: i % 2 === 1 }));
  t.is(open.filter((c) => !c.closed).length, MAX_CONNECTIONS_PER_IP, 'the first 50 are served');

  const refused = await plainGreeting(imapStarttlsPort);
  t.regex(refused.text, /^\* BYE \[UNAVAILABLE\] too many connections/);
  t.true(refused.closed, 'the 51st is closed');
  t.false(refused.text.includes('* OK'), 'and never greeted');

  t.regex(await open[1]!.cmd('a', `LOGIN ${box.address} ${PASSWORD}`), /^a OK/m, 'the held connections still work');
  open[0]!.send('b LOGOUT\r\n');
  t.true(await lastCheck(() => open[0]!.closed, { timeoutMs: 10_000, everyMs: 20 }));
  // The slot is released when the socket closes; poll (bounded) until a new connection is greeted.
  const greeted = await lastCheck(async () => (await plainGreeting(imapStarttlsPort, 1000)).text, { timeoutMs: 10_000, everyMs: 100, done: (g) => g.startsWith('* OK') });
  t.regex(greeted, /^\* OK/, 'a freed slot is served again');
});
