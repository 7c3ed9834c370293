import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { deliver, makeInbox, searchSubjects, waitForEmails } from '../helpers/emails.js';

// A prefix that is also a whole word is searched as that word only when no longer term exists
// (reading.ts `cheaperMatch`); either way the answer is the prefix's.
test('a last word that is a whole word still finds the longer words it begins', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  for (const subject of ['report', 'reports due', 'reporting line', 'repo', 'zulu9', 'zulu', 'zulu99z']) {
    await deliver(app, box.key, box.address, { subject, body_text: 'x' });
  }
  await waitForEmails(app, box.key, 7);
  const subjects = searchSubjects(t, app, box.key);
  t.is(await subjects('report'), 'report,reporting line,reports due');
  t.is(await subjects('REPORTS'), 'reports due');
  t.is(await subjects('reporting'), 'reporting line');
  t.is(await subjects('repo'), 'repo,report,reporting line,reports due');
  t.is(await subjects('"report"'), 'report');
  t.is(await subjects('zulu'), 'zulu,zulu9,zulu99z');
  t.is(await subjects('zulu9'), 'zulu9,zulu99z');
  t.is(await subjects('zulu99z'), 'zulu99z');
  t.is(await subjects('due report'), 'reports due');
  t.is(await subjects('reports due'), 'reports due');
});
