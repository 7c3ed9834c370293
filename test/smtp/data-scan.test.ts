import test from 'ava';
import { SMTPStream } from 'smtp-server/lib/smtp-stream.js';
import { feedDataStream } from '../../src/smtp/data-scan.js';

// smtp-server's own scanner, kept before anything replaces it: the reference the native scan must match.
const reference = SMTPStream.prototype._feedDataStream;

type Outcome = { data: string; counted: number; commands: string[] };

/** Runs one DATA phase through an SMTPStream with the given scanner, fed in these chunks. */
function run(scan: typeof reference, chunks: Buffer[]): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const stream = new SMTPStream();
    stream._feedDataStream = scan;
    const commands: string[] = [];
    stream.oncommand = (command: Buffer, callback?: () => void) => {
      commands.push(command.toString('latin1'));
      if (callback) callback();
    };
    const data = stream.startDataMode();
    const parts: Buffer[] = [];
    data.on('data', (b: Buffer) => parts.push(b));
    data.on('end', () => {
      stream.continue();
      // The pipelined commands after the terminator are dispatched on later turns.
      setImmediate(() => setImmediate(() => resolve({ data: Buffer.concat(parts).toString('latin1'), counted: stream.dataBytes, commands })));
    });
    data.on('error', reject);
    const write = (i: number): void => {
      if (i === chunks.length) return;
      stream.write(chunks[i], () => write(i + 1));
    };
    write(0);
  });
}

const MESSAGES = [
  'Subject: a\r\n\r\nhello\r\n.\r\nQUIT\r\n',
  '.\r\nQUIT\r\n',
  '..\r\n.\r\nNOOP\r\n',
  '..leading escape\r\nbody\r\n.\r\nQUIT\r\n',
  'a\r\n..b\r\n...c\r\n.d\r\n.\r\n.\r\nQUIT\r\n',
  'bare\n.\r\nstill data\r\n.\r\nQUIT\r\n',
  'bare\n..x\n.\n\r\n.\r\nRSET\r\n',
  'x\r\n.\rnot end\r\n.\r\nQUIT\r\n',
  '\r\n.\r\n',
  'line\r\n..\r\n..\r\n.\r\nMAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\n',
  `${'0123456789'.repeat(30)}\r\n..${'z'.repeat(70)}\r\n.\r\nQUIT\r\n`,
];

test('the native DATA scan gives what smtp-server gives, at every split into two and three chunks', async (t) => {
  let cases = 0;
  for (const message of MESSAGES) {
    const bytes = Buffer.from(message, 'latin1');
    for (let i = 1; i < bytes.length; i++) {
      const two = [bytes.subarray(0, i), bytes.subarray(i)];
      t.deepEqual(await run(feedDataStream, two), await run(reference, two), `${JSON.stringify(message)} split at ${i}`);
      cases++;
      const j = Math.min(bytes.length - 1, i + 2);
      if (j > i) {
        const three = [bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)];
        t.deepEqual(await run(feedDataStream, three), await run(reference, three), `${JSON.stringify(message)} split at ${i}, ${j}`);
      }
    }
    const whole = [bytes];
    t.deepEqual(await run(feedDataStream, whole), await run(reference, whole));
  }
  t.true(cases > 300);
});

test('the native DATA scan unstuffs and ends a message fed one byte at a time', async (t) => {
  const bytes = Buffer.from('Subject: dots\r\n\r\n..one\r\n...two\r\nend\r\n.\r\nQUIT\r\n', 'latin1');
  const chunks = [...bytes].map((b) => Buffer.from([b]));
  const got = await run(feedDataStream, chunks);
  t.is(got.data, 'Subject: dots\r\n\r\n.one\r\n..two\r\nend\r\n');
  t.is(got.counted, got.data.length);
  t.deepEqual(got.commands, ['QUIT']);
});

test('the native DATA scan copies no chunk that ends mid-line', async (t) => {
  // Two chunks that split a line: the second is emitted as a view of itself, not a copy.
  const first = Buffer.from('Subject: x\r\n\r\nabc', 'latin1');
  const second = Buffer.from('def\r\n.\r\n', 'latin1');
  const stream = new SMTPStream();
  stream._feedDataStream = feedDataStream;
  stream.oncommand = () => undefined;
  const data = stream.startDataMode();
  const parts: Buffer[] = [];
  data.on('data', (b: Buffer) => parts.push(b));
  await new Promise<void>((resolve) => { data.on('end', resolve); stream.write(first); stream.write(second); });
  t.is(Buffer.concat(parts).toString('latin1'), 'Subject: x\r\n\r\nabcdef\r\n');
  t.is(parts[0].buffer, first.buffer);
  t.is(parts[1].buffer, second.buffer);
});
