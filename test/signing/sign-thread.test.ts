import { createPrivateKey } from 'node:crypto';
import test from 'ava';
import { generateDkimKeyPair } from '../../src/signing/dkim-keys.js';
import { createLogger } from '../../src/logger.js';
import { signForward } from '../../src/signing/sign.js';
import { createSigningThread } from '../../src/signing/sign-thread.js';

const MESSAGE = Buffer.from([
  'From: Alice <alice@origin.test>',
  'To: list@alias.test',
  'Subject: Figures',
  'Date: Thu, 26 Nov 2026 04:00:00 +0000',
  'Message-ID: <t1@origin.test>',
  '',
  'Figures attached in spirit.  Trailing spaces stay   ',
  '',
].join('\r\n'));

test('the signing thread prepends the same ARC set and DKIM-Signature as signForward on the main thread (RSA PKCS#1 v1.5 signatures are deterministic)', async (t) => {
  const pair = await generateDkimKeyPair();
  const signer = createSigningThread({ idleMs: 200, timeoutMs: 30_000, logger: createLogger('silent') });
  t.teardown(() => signer.close());
  const now = new Date('2026-11-26T05:00:00Z');
  const authResults = 'spf=pass smtp.mailfrom=origin.test; dkim=none; dmarc=none';
  const head = await signer.sign(MESSAGE, { pem: pair.privateKeyPem, domain: 'alias.test', selector: 'mailstead', authservId: 'mx.alias.test', authResults, now: now.getTime() });
  const here = await signForward(MESSAGE, { domain: 'alias.test', selector: 'mailstead', privateKey: createPrivateKey(pair.privateKeyPem) }, { authservId: 'mx.alias.test', authResults, now });
  t.is(Buffer.concat([head, MESSAGE]).toString('latin1'), here.toString('latin1'));
  t.regex(head.toString('latin1'), /^ARC-Seal: i=1;[\s\S]*\r\nDKIM-Signature: [\s\S]*\r\n$/);
  t.deepEqual(signer.threads(), { started: 1, exited: 0 });
  // After the idle time the thread stops (its exit event seen); the next request starts another one.
  for (const deadline = Date.now() + 30_000; signer.threads().exited === 0;) {
    if (Date.now() > deadline) throw new Error('the idle thread did not stop');
    await new Promise((r) => setTimeout(r, 20));
  }
  t.deepEqual(signer.threads(), { started: 1, exited: 1 });
  const again = await signer.sign(MESSAGE, { pem: pair.privateKeyPem, domain: 'alias.test', selector: 'mailstead', authservId: 'mx.alias.test', authResults, now: now.getTime() });
  t.true(again.equals(head));
  t.deepEqual(signer.threads(), { started: 2, exited: 1 }, 'a new thread signed it');
});

test('a closed signing thread rejects requests (the caller signs on its own thread then)', async (t) => {
  const signer = createSigningThread({ idleMs: 1_000, timeoutMs: 30_000, logger: createLogger('silent') });
  await signer.close();
  await t.throwsAsync(signer.sign(MESSAGE, { pem: 'x', domain: 'alias.test', selector: 'mailstead', authservId: 'mx', authResults: '', now: Date.now() }), { message: /closed/ });
});

test('a request the thread cannot sign (a key that does not parse) is rejected, and the thread goes on signing', async (t) => {
  const pair = await generateDkimKeyPair();
  const signer = createSigningThread({ idleMs: 1_000, timeoutMs: 30_000, logger: createLogger('silent') });
  t.teardown(() => signer.close());
  await t.throwsAsync(signer.sign(MESSAGE, { pem: 'not a key', domain: 'bad.test', selector: 'mailstead', authservId: 'mx', authResults: '', now: Date.now() }));
  const head = await signer.sign(MESSAGE, { pem: pair.privateKeyPem, domain: 'alias.test', selector: 'mailstead', authservId: 'mx', authResults: '', now: Date.now() });
  t.regex(head.toString('latin1'), /DKIM-Signature: /);
  t.is(signer.threads().started, 1, 'the same thread signed both');
});

test('close stops the running thread', async (t) => {
  const pair = await generateDkimKeyPair();
  const signer = createSigningThread({ idleMs: 60_000, timeoutMs: 30_000, logger: createLogger('silent') });
  await signer.sign(MESSAGE, { pem: pair.privateKeyPem, domain: 'alias.test', selector: 'mailstead', authservId: 'mx', authResults: '', now: Date.now() });
  t.deepEqual(signer.threads(), { started: 1, exited: 0 });
  await signer.close();
  for (const deadline = Date.now() + 30_000; signer.threads().exited === 0;) {
    if (Date.now() > deadline) throw new Error('the thread did not stop');
    await new Promise((r) => setTimeout(r, 20));
  }
  t.deepEqual(signer.threads(), { started: 1, exited: 1 });
});
