import { existsSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startTestApp } from '../helpers/app.js';
import { fingerprintNow } from '../tls/starttls.js';
import { pemFiles } from './files.js';

test('MAILSTEAD_TLS_CERT/KEY take precedence over ACME: their pair serves, no account, no order', async (t) => {
  const files = await pemFiles(t, 'files.mailstead.test');
  const app = await startTestApp(t, {
    env: { ...files.env, MAILSTEAD_ACME_EMAIL: 'postmaster@example.org', MAILSTEAD_ACME_DIRECTORY: 'https://127.0.0.1:1/dir' },
    acme: { policy: { checkEveryMs: 50 } },
  });
  t.false(app.app.acme.enabled);
  t.is(app.app.tls.current().source, 'files');
  t.is(await fingerprintNow(app.smtpPort, 'mx.mailstead.test'), files.fingerprint);
  // ACME is off (no schedule exists), so there is nothing to wait for: no look, no attempt.
  t.like(app.app.acme.status(), { attempts: 0, looks: 0 });
  t.false(existsSync(join(app.dataDir, 'tls', 'acme')));
  const metrics = await (await fetch(`http://127.0.0.1:${app.httpPort}/metrics`)).text();
  t.regex(metrics, /^mailstead_tls_certificate_expiry_seconds\{source="files"\} \d+$/m);
});

test('without MAILSTEAD_ACME_EMAIL ACME is off: self-signed serves and the challenge path answers 404', async (t) => {
  const app = await startTestApp(t);
  t.false(app.app.acme.enabled);
  t.is(app.app.tls.current().source, 'self-signed');
  const res = await fetch(`http://127.0.0.1:${app.httpPort}/.well-known/acme-challenge/anything`);
  t.is(res.status, 404);
  await res.arrayBuffer();
  t.false(existsSync(join(app.dataDir, 'tls', 'acme')));
  const metrics = await (await fetch(`http://127.0.0.1:${app.httpPort}/metrics`)).text();
  t.regex(metrics, /^mailstead_tls_certificate_expiry_seconds\{source="self-signed"\} \d+$/m);
});

test('MAILSTEAD_ACME_EMAIL and MAILSTEAD_ACME_DIRECTORY: defaults, and bad values refused with the variable named', (t) => {
  const defaults = loadConfig({ MAILSTEAD_HOSTNAME: 'mail.example.org' });
  t.is(defaults.acmeEmail, null);
  t.is(defaults.acmeDirectory, 'https://acme-v02.api.letsencrypt.org/directory');
  const set = loadConfig({ MAILSTEAD_ACME_EMAIL: 'ops@example.org', MAILSTEAD_ACME_DIRECTORY: 'https://acme-staging-v02.api.letsencrypt.org/directory' });
  t.is(set.acmeEmail, 'ops@example.org');
  t.is(set.acmeDirectory, 'https://acme-staging-v02.api.letsencrypt.org/directory');
  for (const [name, value] of [['MAILSTEAD_ACME_EMAIL', 'not an address'], ['MAILSTEAD_ACME_EMAIL', 'a@b@c'], ['MAILSTEAD_ACME_DIRECTORY', 'http://acme.example/dir'], ['MAILSTEAD_ACME_DIRECTORY', '']]) {
    const err = t.throws(() => loadConfig({ [name]: value }), { instanceOf: ConfigError }, `${name}=${value}`);
    t.true(err!.message.includes(name));
  }
});
