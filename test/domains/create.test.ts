import test from 'ava';
import { startTestApp } from '../helpers/app.js';

test('a created domain completes with its DNS plan', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const res = await app.post('/v1/create/domain', key, { Domain: 'Example.org' });
  t.is(res.status, 200);
  t.deepEqual(Object.keys(res.body).sort(), ['domain', 'status', 'task_id']);
  t.is(res.body.status, 'success');
  t.is(res.body.domain, 'example.org');
  t.true(Number.isInteger(res.body.task_id));
  const task = await app.pollTask('/v1/get/domain', key, res.body.task_id);
  t.is(task.status, 200);
  t.is(task.body.status, 'completed');
  t.is(task.body.Task_id, res.body.task_id);
  t.is(task.body.task_id, String(res.body.task_id));
  t.is(task.body.total_email, 0);
  t.is(task.body.domain, 'example.org');
  t.is(task.body.results.domain, 'example.org');
  t.is(task.body.results.status, 'pending');
  const records = task.body.results.records;
  t.deepEqual(records.map((r: any) => [r.type, r.name, r.priority]), [
    ['MX', 'example.org', '10'], ['MX', 'example.org', '20'], ['TXT', '_mailstead.example.org', '-'],
    ['TXT', 'example.org', '-'], ['TXT', 'mailstead._domainkey.example.org', '-'], ['TXT', '_dmarc.example.org', '-'],
    // DECISIONS.md section 21: the mail client records, after the six of section 4.
    ['SRV', '_imaps._tcp.example.org', '0'], ['SRV', '_submissions._tcp.example.org', '0'], ['SRV', '_submission._tcp.example.org', '0'],
    ['CNAME', 'autoconfig.example.org', '-'], ['CNAME', 'autodiscover.example.org', '-'],
  ]);
  t.is(records[0].value, 'mx1.mailstead.test');
  t.is(records[1].value, 'mx2.mailstead.test');
  t.regex(records[2].value, /^mailstead-verification=[0-9a-f]{32}$/);
  t.is(records[3].value, 'v=spf1 mx -all');
  t.regex(records[4].value, /^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/);
  t.is(records[5].value, 'v=DMARC1; p=none');
  t.deepEqual(records.slice(6).map((r: any) => r.value), ['1 993 mx.mailstead.test', '1 465 mx.mailstead.test', '1 587 mx.mailstead.test', 'mx.mailstead.test', 'mx.mailstead.test']);
  t.true(records.every((r: any) => r.status === 'Not checked'));
  t.deepEqual(Object.keys(records[0]).sort(), ['name', 'priority', 'status', 'type', 'value']);
});
