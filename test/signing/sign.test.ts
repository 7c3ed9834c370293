import { createPrivateKey } from 'node:crypto';
import test from 'ava';
import { authenticate, type DNSResolver } from 'mailauth';
import { generateDkimKeyPair } from '../../src/signing/dkim-keys.js';
import { signDkim, signForward, type SigningKey } from '../../src/signing/sign.js';
import { startMxZone, type MxZone } from '../outbound/mx-zone.js';

const MESSAGE = Buffer.from([
  'Received: from client.origin.test (client.origin.test [192.0.2.50]) by mx.alias.test; Thu, 26 Nov 2026 04:00:00 +0000',
  'From: Alice <alice@origin.test>',
  'To: list@alias.test',
  'Subject: Quarterly figures',
  'Date: Thu, 26 Nov 2026 04:00:00 +0000',
  'Message-ID: <m1@origin.test>',
  'MIME-Version: 1.0',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'Figures attached in spirit.  Trailing spaces stay   ',
  '',
  '',
].join('\r\n'));

/** A fresh key published at mailstead._domainkey.<domain> in the zone. */
async function publishKey(zone: MxZone, domain: string): Promise<SigningKey> {
  const pair = await generateDkimKeyPair();
  zone.txt(`mailstead._domainkey.${domain}`, `v=DKIM1; k=rsa; p=${pair.publicKeyBase64}`);
  return { domain, selector: 'mailstead', privateKey: createPrivateKey(pair.privateKeyPem) };
}

/** mailauth's resolver signature over the test zone, through node's resolver as the app uses it. */
function lookup(zone: MxZone): DNSResolver {
  const resolver = zone.resolver();
  return (name, rrtype) => resolver.resolve(name, rrtype) as Promise<string[][] | string[]>;
}

/** mailauth's verdicts on a message as a receiving MX sees it; `arc` is false when ARC was not checked. */
async function verify(message: Buffer, zone: MxZone) {
  const result = await authenticate(message, {
    resolver: lookup(zone), ip: '192.0.2.80', helo: 'mx.alias.test', sender: 'SRS0=abcd=XY=origin.test=alice@alias.test', mta: 'mx.dest.test',
    disableBimi: true,
  });
  if (!result.arc) throw new Error('mailauth did not check ARC');
  return { ...result, arc: result.arc };
}

/** The header names prepended in front of `original` inside `signed`. */
function prependedNames(signed: Buffer, original: Buffer): string[] {
  const added = signed.subarray(0, signed.length - original.length).toString('latin1');
  return added.split(/\r?\n/).filter((l) => /^[^\s]/.test(l)).map((l) => l.slice(0, l.indexOf(':')));
}

test('signForward: ARC set and DKIM-Signature verify (dkim pass d=alias domain, arc pass i=1); the message follows byte for byte', async (t) => {
  const zone = await startMxZone(t);
  const key = await publishKey(zone, 'alias.test');
  const signed = await signForward(MESSAGE, key, { authservId: 'mx.alias.test', authResults: 'spf=pass smtp.mailfrom=origin.test; dkim=none' });

  t.true(signed.subarray(signed.length - MESSAGE.length).equals(MESSAGE));
  t.deepEqual(prependedNames(signed, MESSAGE), ['ARC-Seal', 'ARC-Message-Signature', 'ARC-Authentication-Results', 'DKIM-Signature']);
  const head = signed.toString('latin1');
  t.regex(head, /ARC-Authentication-Results: i=1; mx\.alias\.test; spf=pass smtp\.mailfrom=origin\.test; dkim=none/);
  t.regex(head, /ARC-Seal: i=1; a=rsa-sha256;[^]*?cv=none;\s+d=alias\.test;\s+s=mailstead;/);
  t.regex(head, /ARC-Seal:[^]*?cv=none/);
  // The ARC-Message-Signature covers the DKIM-Signature made before it.
  t.regex(head.replace(/\r\n\s+/g, ' '), /ARC-Message-Signature: [^\r\n]*h=[^;]*DKIM-Signature/);

  const result = await verify(signed, zone);
  const dkim = result.dkim.results.find((r) => r.signingDomain === 'alias.test');
  t.is(dkim?.status.result, 'pass');
  t.is(dkim?.selector, 'mailstead');
  t.is(result.arc.status.result, 'pass');
  t.is(result.arc.i, 1);
});

test('a message that already carries an ARC set gets instance 2 with cv=pass, and the chain verifies', async (t) => {
  const zone = await startMxZone(t);
  const firstKey = await publishKey(zone, 'first.test');
  const ourKey = await publishKey(zone, 'alias.test');
  const once = await signForward(MESSAGE, firstKey, { authservId: 'mx.first.test', authResults: 'spf=pass smtp.mailfrom=origin.test' });

  // Nothing tells the signer how the arriving chain verified: it checks the seals over DNS itself.
  const twice = await signForward(once, ourKey, { authservId: 'mx.alias.test', authResults: 'spf=fail smtp.mailfrom=first.test', resolver: lookup(zone) });
  t.true(twice.subarray(twice.length - once.length).equals(once));
  t.regex(twice.toString('latin1'), /^ARC-Seal: i=2; a=rsa-sha256; [^]*?cv=pass/);
  const result = await verify(twice, zone);
  t.is(result.arc.status.result, 'pass');
  t.is(result.arc.i, 2);
  t.is(result.dkim.results.find((r) => r.signingDomain === 'alias.test')?.status.result, 'pass');

  // An arc= verdict from our inbound checks is used as the chain's validation without a lookup.
  const fromVerdict = await signForward(once, ourKey, { authservId: 'mx.alias.test', authResults: 'arc=pass smtp.remote-ip=192.0.2.1' });
  t.regex(fromVerdict.toString('latin1'), /^ARC-Seal: i=2;[^]*?cv=pass/);
  t.is((await verify(fromVerdict, zone)).arc.status.result, 'pass');
});

test('a chain that failed gets no new ARC set (DKIM only); a tampered chain is sealed with cv=fail', async (t) => {
  const zone = await startMxZone(t);
  const firstKey = await publishKey(zone, 'first.test');
  const ourKey = await publishKey(zone, 'alias.test');
  const once = await signForward(MESSAGE, firstKey, { authservId: 'mx.first.test', authResults: 'spf=pass smtp.mailfrom=origin.test' });

  const judgedFailed = await signForward(once, ourKey, { authservId: 'mx.alias.test', authResults: 'spf=pass', cv: 'fail' });
  t.regex(judgedFailed.toString('latin1'), /^ARC-Seal: i=2;[^]*?cv=fail/);
  // That copy's chain is now failed for good: the next forwarder adds its DKIM signature only.
  const thirdKey = await publishKey(zone, 'third.test');
  const third = await signForward(judgedFailed, thirdKey, { authservId: 'mx.third.test', authResults: 'spf=pass' });
  t.deepEqual(prependedNames(third, judgedFailed), ['DKIM-Signature']);
  t.is((await verify(third, zone)).dkim.results.find((r) => r.signingDomain === 'third.test')?.status.result, 'pass');

  // A set whose seal is missing is broken: our set records cv=fail.
  const text = once.toString('latin1');
  const sealEnd = text.indexOf('\r\nARC-Message-Signature:');
  const broken = Buffer.from(text.slice(sealEnd + 2), 'latin1');
  const resealed = await signForward(broken, ourKey, { authservId: 'mx.alias.test', authResults: 'spf=pass' });
  t.regex(resealed.toString('latin1'), /^ARC-Seal: i=2;[^]*?cv=fail/);

  // A chain our inbound checks called passing but that is no valid chain (its first seal says cv=pass) is sealed as failed.
  const misnumbered = Buffer.from(text.replace(/^(ARC-Seal: i=1; [^]*?)cv=none/, '$1cv=pass'), 'latin1');
  const sealedFailed = await signForward(misnumbered, ourKey, { authservId: 'mx.alias.test', authResults: 'arc=pass' });
  t.regex(sealedFailed.toString('latin1'), /^ARC-Seal: i=2;[^]*?cv=fail/);
});

test('signDkim: one DKIM-Signature that verifies; the message follows byte for byte', async (t) => {
  const zone = await startMxZone(t);
  const key = await publishKey(zone, 'sender.test');
  const signed = await signDkim(MESSAGE, key);
  t.true(signed.subarray(signed.length - MESSAGE.length).equals(MESSAGE));
  t.deepEqual(prependedNames(signed, MESSAGE), ['DKIM-Signature']);
  const result = await verify(signed, zone);
  const dkim = result.dkim.results.find((r) => r.signingDomain === 'sender.test');
  t.is(dkim?.status.result, 'pass');
});

test('a bare-LF message gets bare-LF headers and still verifies', async (t) => {
  const zone = await startMxZone(t);
  const key = await publishKey(zone, 'alias.test');
  const lf = Buffer.from(MESSAGE.toString('latin1').replace(/\r\n/g, '\n'), 'latin1');
  const signed = await signForward(lf, key, { authservId: 'mx.alias.test', authResults: 'spf=pass smtp.mailfrom=origin.test' });
  t.true(signed.subarray(signed.length - lf.length).equals(lf));
  t.false(signed.includes('\r'));
  const result = await verify(signed, zone);
  t.is(result.arc.status.result, 'pass');
  t.is(result.dkim.results.find((r) => r.signingDomain === 'alias.test')?.status.result, 'pass');
});
