import test from 'ava';
import { startTls } from '../tls/starttls.js';
import { chainOn, imapCommand, openTls, type TlsFace } from './handshakes.js';
import { acmeWorld, HOSTNAME, leafOf, startAcmeApp, waitFor } from './setup.js';

test('after the first issuance IMAPS, IMAP STARTTLS, submissions and submission serve the Pebble chain; sessions opened before keep working', async (t) => {
  const world = await acmeWorld(t);
  const app = await startAcmeApp(t, world);
  const faces: Array<{ name: string; face: TlsFace; port: number }> = [
    { name: 'IMAPS', face: 'implicit', port: app.imapPort },
    { name: 'IMAP STARTTLS', face: 'imap-starttls', port: app.imapStarttlsPort },
    { name: 'submissions (465)', face: 'implicit', port: app.submissionsPort },
    { name: 'submission STARTTLS (587)', face: 'smtp-starttls', port: app.submissionPort },
  ];
  for (const f of faces) t.true(f.port > 0, `${f.name} listens`);

  // Sessions under TLS with the self-signed certificate, opened before the ACME order completes.
  const imapsBefore = await openTls('implicit', app.imapPort, HOSTNAME);
  t.teardown(() => imapsBefore.destroy());
  const imapStarttlsBefore = await openTls('imap-starttls', app.imapStarttlsPort, HOSTNAME);
  t.teardown(() => imapStarttlsBefore.destroy());
  const submissionBefore = await startTls(app.submissionPort, HOSTNAME);
  t.teardown(() => submissionBefore.close());
  const selfSigned = leafOf(app.app.tls.current().cert);
  t.is(app.app.tls.current().source, 'self-signed', 'the order has not completed yet');
  t.is(imapsBefore.getPeerCertificate().fingerprint256, selfSigned.fingerprint);

  await waitFor('the ACME certificate in force', () => app.app.tls.current().source === 'acme');
  const issued = leafOf(app.app.tls.current().cert);
  const intermediate = leafOf(await world.pebble.intermediate());
  t.not(issued.fingerprint, selfSigned.fingerprint);

  for (const f of faces) {
    for (const servername of [HOSTNAME, undefined]) {
      const what = `${f.name}, SNI ${servername ?? 'none'}`;
      const chain = await chainOn(f.face, f.port, servername);
      t.is(chain.fingerprint, issued.fingerprint, what);
      t.is(chain.subjectAltName, `DNS:${HOSTNAME}`, what);
      t.regex(chain.issuerCN, /^Pebble Intermediate CA/, what);
      t.is(chain.issuerFingerprint, intermediate.fingerprint, `${what}: the full chain is served`);
    }
  }

  // The sessions from before keep the certificate they negotiated and are still served.
  t.is(imapStarttlsBefore.getPeerCertificate().fingerprint256, selfSigned.fingerprint);
  t.regex(await imapCommand(imapsBefore, 'b1', 'NOOP'), /^b1 OK/);
  t.regex(await imapCommand(imapStarttlsBefore, 'b2', 'CAPABILITY'), /^b2 OK/);
  t.is(submissionBefore.fingerprint, selfSigned.fingerprint);
  t.regex(await submissionBefore.command('NOOP'), /^250 /);
});
