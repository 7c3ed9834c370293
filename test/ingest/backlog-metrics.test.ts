import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { poll } from '../helpers/poll.js';
import { provision, sendMail, waitForEmails } from '../helpers/smtp.js';

test('the ingest backlog gauges are 0 once mail is stored and count SMTP mail acknowledged and not yet stored', async (t) => {
  const app = await startTestApp(t);
  const setup = await provision(app, 'backlog.test', ['box']);
  const metric = async (name: string) => {
    const text = await (await fetch(`http://127.0.0.1:${app.httpPort}/metrics`)).text();
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };
  const raw = (n: number) => `From: a@sender.example\r\nTo: box@backlog.test\r\nSubject: waiting ${n}\r\nMessage-ID: <w${n}@sender.example>\r\n\r\nbody\r\n`;
  await sendMail(app.smtpPort, { from: 'a@sender.example', to: ['box@backlog.test'] }, raw(0));
  await waitForEmails(app, setup.key, 1);
  // The worker counts a message out of its backlog just after the commit that makes it listed: wait for that.
  await poll('the backlog gauge back to 0', () => metric('mailstead_ingest_backlog_messages'), { timeoutMs: 10_000, done: (n) => n === 0 });
  t.is(await metric('mailstead_ingest_backlog_messages'), 0);
  t.is(await metric('mailstead_ingest_backlog_seconds'), 0);
  t.is(await metric('mailstead_ingest_inflow_delay_seconds'), 0);

  // A parser that never answers: what is acknowledged now stays unstored.
  let parsing = 0;
  app.app.emails.ingest.setRawParser(() => { parsing++; return new Promise(() => undefined); });
  for (let n = 1; n <= 3; n++) t.regex((await sendMail(app.smtpPort, { from: 'a@sender.example', to: ['box@backlog.test'] }, raw(n))).response, /^250 /);
  const deadline = Date.now() + 10_000;
  while (parsing < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.true(parsing >= 1, 'the first was moved into the queue and handed to the parser');
  // It holds its batch, so the others wait behind it (in the journal or the queue): all three count.
  t.is(await metric('mailstead_ingest_backlog_messages'), 3);
  t.true((await metric('mailstead_ingest_backlog_seconds'))! > 0);
  t.is(await metric('mailstead_ingest_inflow_delay_seconds'), 0, 'three messages are far under the in-flow bound');
});
