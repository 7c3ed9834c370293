import { createHash } from 'node:crypto';
import test from 'ava';
import { sendMail } from '../helpers/smtp.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, startWorld, waitForItems } from './world.js';

test('a message of nearly 25 MB is forwarded whole, its bytes unchanged', async (t) => {
  const { app, key, sink } = await startWorld(t);
  const line = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/abcdefghij\r\n';
  const body = line.repeat(Math.floor((24 * 1024 * 1024) / line.length));
  const raw = Buffer.from(`From: <ann@${REMOTE_DOMAIN}>\r\nTo: <fwd@${ALIAS_DOMAIN}>\r\nSubject: big\r\nMessage-ID: <big.1@remote.test>\r\n\r\n${body}`, 'latin1');
  await sendMail(app.smtpPort, { from: `ann@${REMOTE_DOMAIN}`, to: [`fwd@${ALIAS_DOMAIN}`], size: raw.length }, raw);
  const m = await sink.nth(1, 50_000);
  t.true(m.raw.length > raw.length);
  const tail = m.raw.subarray(m.raw.length - raw.length);
  t.is(createHash('sha256').update(tail).digest('hex'), createHash('sha256').update(raw).digest('hex'));
  const [item] = await waitForItems(app, key, (items) => items[0]?.status === 'sent', 'sent');
  t.is(item.attempts, 1);
});
