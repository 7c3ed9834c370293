import test from 'ava';
import { pino } from 'pino';
import { startTestApp } from '../helpers/app.js';
import { provision, sendMail } from '../helpers/smtp.js';

test('a parse cut off by stopping is not reported as a failed message; a parse failing while running is', async (t) => {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => { lines.push(JSON.parse(s)); } });
  const app = await startTestApp(t, { logger });
  await provision(app, 'stop.test', ['box']);
  const raw = (n: number) => `From: a@sender.example\r\nTo: box@stop.test\r\nSubject: stop ${n}\r\nMessage-ID: <stop-${n}@sender.example>\r\n\r\nbody\r\n`;
  const prepareWarnings = () => lines.filter((l) => l.msg === 'inbound message could not be prepared');
  const ingest = app.app.emails.ingest;
  const waitFor = async (ready: () => boolean) => {
    const deadline = Date.now() + 10_000;
    while (!ready() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  };

  // While running, a parse that fails is worth a warning (and the message is retried later).
  ingest.setRawParser(async () => { throw new Error('unreadable'); });
  await sendMail(app.smtpPort, { from: 'a@sender.example', to: ['box@stop.test'] }, raw(1));
  await waitFor(() => prepareWarnings().length > 0);
  t.is(prepareWarnings().length, 1);

  // Parses under way when the server stops are cut off (the parser threads close after the worker
  // has stopped): their rows stay queued for the next start, which is no failure to report.
  const cutOff: Array<(e: Error) => void> = [];
  ingest.setRawParser(() => new Promise((_resolve, reject) => { cutOff.push(reject); }));
  await sendMail(app.smtpPort, { from: 'a@sender.example', to: ['box@stop.test'] }, raw(2));
  await waitFor(() => cutOff.length > 0);
  t.true(cutOff.length >= 1, 'the second message is being parsed');
  await app.stop();
  for (const reject of cutOff) reject(new Error('parser pool closed'));
  // The worker handles a rejected parse in promise reactions alone (no I/O: the server has stopped),
  // so once the microtask queue has drained, at the next macrotask, whatever it would log is logged.
  await new Promise((r) => setImmediate(r));
  t.is(prepareWarnings().length, 1, 'no warning for the parse cut off by stopping');
  t.is(lines.filter((l) => l.level >= 50).length, 0, 'and no error');
});
