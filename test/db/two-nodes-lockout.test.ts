import test from 'ava';
import { rawImap } from '../helpers/imap.js';
import { startNodes } from '../helpers/nodes.js';

// Two server processes on one PostgreSQL database (DECISIONS.md section 13 and 17): the login
// lock-out counts failures on every node, through IMAP LOGIN (which needs no stored mail).

const PASSWORD = 'password-123';

test.serial('ten failed IMAP logins spread over two nodes lock the IP out of both; the right password is refused then', async (t) => {
  t.timeout(180_000);
  const { cluster, nodes: [a, b] } = await startNodes(t);
  const key = await cluster.tenantKey();
  const d = await a!.post('/v1/create/domain', key, { Domain: 'lock.example' });
  t.is((await a!.pollTask('/v1/get/domain', key, d.body.task_id)).body.status, 'completed');
  const m = await b!.post('/v1/create/mailbox/single', key, { Email_fullname: 'Lock Test', single_bulk: 'single', Domain: 'lock.example', Params: { email_id: 'box@lock.example', password: PASSWORD } });
  t.is((await b!.pollTask('/v1/get/mailbox/single', key, m.body.task_id)).body.status, 'completed');

  const sessions = await Promise.all([a!, b!].map(async (node) => {
    const s = await rawImap(t, node.port('imap_port'));
    await s.until(/^\* OK/);
    return s;
  }));
  let n = 0;
  const login = async (node: 0 | 1, password: string) => {
    const s = sessions[node]!;
    const tag = `t${++n}`;
    const from = s.text().length;
    s.send(`${tag} LOGIN box@lock.example ${password}\r\n`);
    const reply = await s.until(new RegExp(`^${tag} `), 15_000, from);
    return reply.split('\r\n').find((l) => l.startsWith(`${tag} `))!;
  };

  // A login that succeeds is not a failure (its attempt is forgotten).
  const ok = await rawImap(t, b!.port('imap_port'));
  await ok.until(/^\* OK/);
  ok.send(`ok LOGIN box@lock.example ${PASSWORD}\r\n`);
  t.regex(await ok.until(/^ok /), /^ok OK/m, 'the right password logs in on B');

  for (let i = 0; i < 10; i++) {
    t.regex(await login((i % 2) as 0 | 1, `wrong-${i}`), /^t\d+ NO \[AUTHENTICATIONFAILED\]/, `failure ${i + 1}`);
  }
  t.regex(await login(0, PASSWORD), /^t\d+ NO \[UNAVAILABLE\]/, 'node A refuses the right password');
  t.regex(await login(1, PASSWORD), /^t\d+ NO \[UNAVAILABLE\]/, 'node B too');
  const rows = await cluster.admin.db.selectFrom('login_failures').select('ip').execute();
  t.is(rows.length, 10, 'ten failures counted in the database, refused attempts not');
});
