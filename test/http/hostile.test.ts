import test from 'ava';
import { startTestApp } from '../helpers/app.js';

const WEIRD = ['abc', '-1', '0', '99999999999999999999', '1.5', '%00', "'%3B DROP TABLE emails%3B--", '%F0%9F%92%A9', 'a'.repeat(2000), '%5B%5D'];
const BODIES = [
  '{}', '[]', 'null', '"x"', '1', '{"Domain":null}', '{"Domain":{"a":1}}', JSON.stringify({ Domain: `${'a'.repeat(5000)}.com` }),
  '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"polluted":1}}}', JSON.stringify({ url: 'javascript:alert(1)', events: ['email.received'] }),
  JSON.stringify({ Mailboxes: Array(1000).fill('a@b.com') }), JSON.stringify({ message_id: 'x', from_email: 'a@b.c', to_email: 'x@y.z', subject: 's', received_at: 'yesterday' }),
];

test('every operation answers hostile paths, queries and bodies within the error contract, never with a 5xx', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const doc = (await app.get('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  let requests = 0;
  const problems: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const method of Object.keys(ops)) {
      const hasBody = method !== 'get' && method !== 'delete';
      for (const [i, w] of WEIRD.entries()) {
        const p = path.replace(/\{[^}]+\}/g, w);
        const q = `?task_id=${w}&cursor=${w}&per_page=${w}&since=${w}&unread=${w}&q=${w}&mailbox_id=${w}&domain=${w}`;
        const res = await fetch(`http://127.0.0.1:${app.httpPort}${p}${i % 2 ? q : ''}`, {
          method: method.toUpperCase(),
          headers: { authorization: `Bearer ${key}`, ...(hasBody ? { 'content-type': 'application/json' } : {}) },
          body: hasBody ? BODIES[(requests + i) % BODIES.length] : undefined,
        });
        requests++;
        const text = await res.text();
        if (res.status >= 500 || !/"status":"(error|success|accepted)"|^\{"(Task_id|domain|total_domain|openapi)"/.test(text)) {
          problems.push(`${method} ${p.slice(0, 80)} -> ${res.status} ${text.slice(0, 80)}`);
        }
      }
    }
  }
  t.true(requests > 300, `${requests} requests`);
  t.deepEqual(problems, []);
  t.is(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution');
  t.is((await app.get('/health')).status, 200, 'still serving');
});
