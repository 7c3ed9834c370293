import test from 'ava';
import { tempDir } from '../helpers/app.js';
import { waitFor } from '../helpers/webhooks.js';
import { startServerProcess } from '../helpers/process.js';
import { imapApp, PASSWORD, rawImap } from '../helpers/imap.js';

test('the process logs imap_port and imap_starttls_port for port 0, and both listeners greet', async (t) => {
  const server = await startServerProcess(tempDir(t), {}, 120_000);
  t.teardown(() => { server.child.kill('SIGKILL'); });
  const ports = (await waitFor(() => {
    const imap = /"imap_port":(\d+)/.exec(server.output());
    const starttls = /"imap_starttls_port":(\d+)/.exec(server.output());
    return imap && starttls ? { imap: Number(imap[1]), starttls: Number(starttls[1]) } : null;
  }, 'the IMAP port lines', 30_000))!;
  const implicit = await rawImap(t, ports.imap);
  t.regex(implicit.text(), /^\* OK \[CAPABILITY IMAP4rev2 IMAP4rev1 .*AUTH=PLAIN.*\]/);
  const plain = await rawImap(t, ports.starttls, { secure: false });
  t.regex(plain.text(), /STARTTLS LOGINDISABLED/);
  server.child.kill('SIGTERM');
  t.is(await server.exited, 0);
});

test('imap_credentials names MAILSTEAD_HOSTNAME and port 993 when the port is 0; ENABLE, ID, UNSELECT and CLOSE', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  const list = await app.get(`/v1/list/mailbox?domain=${box.domain}&include_credentials=1`, box.key);
  t.deepEqual(list.body.results[box.address].imap_credentials, { host: 'mx.mailstead.test', port: 993, encryption: 'ssl' });
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('a', 'ID ("name" "test")'), /\* ID \("name" "Mailstead"/);
  await c.cmd('b', `LOGIN ${box.address} ${PASSWORD}`);
  t.regex(await c.cmd('c', 'ENABLE IMAP4rev2 CONDSTORE X-UNKNOWN'), /\* ENABLED IMAP4rev2 CONDSTORE\r\n/);
  await c.cmd('d', 'SELECT INBOX');
  t.regex(await c.cmd('e', 'SEARCH ALL'), /\* ESEARCH \(TAG "e"\)\r\n/, 'IMAP4rev2 answers SEARCH with ESEARCH');
  t.regex(await c.cmd('f', 'STATUS INBOX (APPENDLIMIT)'), /APPENDLIMIT 26214400/);
  t.regex(await c.cmd('g', 'UNSELECT'), /^g OK/m);
  t.regex(await c.cmd('h', 'FETCH 1 FLAGS'), /^h BAD/m, 'nothing selected after UNSELECT');
  await c.cmd('i', 'SELECT INBOX');
  t.regex(await c.cmd('j', 'CLOSE'), /^j OK/m);
  t.regex(await c.cmd('k', 'CLOSE'), /^k BAD/m);
});
