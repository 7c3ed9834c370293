import { createServer } from 'node:https';
import test, { type ExecutionContext } from 'ava';
import { generate } from 'selfsigned';
import { sendMail } from '../helpers/smtp.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, REMOTE_MX, message, startWorld, waitForItems } from './world.js';

/** A self-signed certificate for these names that also serves as its own CA. */
async function certFor(names: string[]) {
  const pems = await generate([{ name: 'commonName', value: names[0] }], {
    keySize: 2048, algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true },
      { name: 'subjectAltName', altNames: names.map((value) => ({ type: 2 as const, value })) },
    ],
  } as any);
  return { cert: pems.cert, key: pems.private };
}

/** An HTTPS server on 127.0.0.1 serving an MTA-STS policy; resolves with its port. */
async function servePolicy(t: ExecutionContext, tls: { cert: string; key: string }, policy: string): Promise<number> {
  const server = createServer(tls, (req, res) => {
    if (req.url === '/.well-known/mta-sts.txt') { res.writeHead(200, { 'content-type': 'text/plain' }); res.end(policy); return; }
    res.writeHead(404); res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as { port: number }).port;
}

const enforce = (mx: string) => `version: STSv1\nmode: enforce\nmx: ${mx}\nmax_age: 86400\n`;

async function stsWorld(t: ExecutionContext, o: { policyMx: string; sinkCertValid: boolean }) {
  const good = await certFor([REMOTE_MX, `mta-sts.${REMOTE_DOMAIN}`]);
  const policyPort = await servePolicy(t, good, enforce(o.policyMx));
  const sinkTls = o.sinkCertValid ? good : await certFor([REMOTE_MX]);
  const world = await startWorld(t, { sinkTls, testing: { mtaStsPort: policyPort, mtaStsCa: good.cert, tlsCa: good.cert } });
  world.zone.txt(`_mta-sts.${REMOTE_DOMAIN}`, 'v=STSv1; id=20261126');
  world.zone.a(`mta-sts.${REMOTE_DOMAIN}`, '127.0.0.1');
  return world;
}

test('MTA-STS enforce: delivered over TLS to a listed MX whose certificate is valid for its name', async (t) => {
  const { app, sink } = await stsWorld(t, { policyMx: REMOTE_MX, sinkCertValid: true });
  await sendMail(app.smtpPort, { from: `ann@${REMOTE_DOMAIN}`, to: [`fwd@${ALIAS_DOMAIN}`] }, message(`ann@${REMOTE_DOMAIN}`, `fwd@${ALIAS_DOMAIN}`, 'sts ok'));
  const m = await sink.nth(1);
  t.true(m.secure);
  t.deepEqual(m.to, [`dest@${REMOTE_DOMAIN}`]);
});

test('MTA-STS enforce: a certificate not valid for the MX is never sent to (no plaintext fallback); the item waits', async (t) => {
  const { app, key, sink } = await stsWorld(t, { policyMx: REMOTE_MX, sinkCertValid: false });
  await sendMail(app.smtpPort, { from: `ann@${REMOTE_DOMAIN}`, to: [`fwd@${ALIAS_DOMAIN}`] }, message(`ann@${REMOTE_DOMAIN}`, `fwd@${ALIAS_DOMAIN}`, 'sts bad cert'));
  const [item] = await waitForItems(app, key, (items) => items[0]?.attempts >= 1, 'a try');
  t.is(item.status, 'queued');
  t.regex(item.last_response, /TLS|certificate/i);
  t.is(sink.messages.length, 0);
});

test('MTA-STS enforce: an MX the policy does not list is not used; the item waits', async (t) => {
  const { app, key, sink } = await stsWorld(t, { policyMx: 'mx.elsewhere.test', sinkCertValid: true });
  await sendMail(app.smtpPort, { from: `ann@${REMOTE_DOMAIN}`, to: [`fwd@${ALIAS_DOMAIN}`] }, message(`ann@${REMOTE_DOMAIN}`, `fwd@${ALIAS_DOMAIN}`, 'sts unlisted'));
  const [item] = await waitForItems(app, key, (items) => items[0]?.attempts >= 1, 'a try');
  t.is(item.status, 'queued');
  t.regex(item.last_response, /MTA-STS/);
  t.is(sink.messages.length, 0);
});
