import test from 'ava';
import { XMLParser } from 'fast-xml-parser';
import { request } from 'undici';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { createMailbox } from '../helpers/mailboxes.js';

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', parseTagValue: false, isArray: (name) => name === 'outgoingServer' || name === 'incomingServer' });

/** A GET on the HTTP listener as a client of `host` would send it (the Host header names the virtual host). */
async function lookup(app: TestClient, host: string, path: string) {
  const res = await request(`http://127.0.0.1:${app.httpPort}${path}`, { headers: { host } });
  return { status: res.statusCode, type: String(res.headers['content-type']), text: await res.body.text() };
}

/** What Thunderbird makes of a clientConfig: its servers, with %EMAILADDRESS% replaced by the typed address. */
function settingsOf(text: string, address: string) {
  const doc = xml.parse(text, true);
  const provider = doc.clientConfig.emailProvider;
  const server = (s: any) => ({ type: s['@type'], hostname: s.hostname, port: Number(s.port), socketType: s.socketType, username: String(s.username).replace('%EMAILADDRESS%', address), authentication: s.authentication });
  return { version: doc.clientConfig['@version'], domain: provider.domain, incoming: provider.incomingServer.map(server), outgoing: provider.outgoingServer.map(server) };
}

test('Thunderbird finds the settings at the well-known URL of the domain, then at the autoconfig host', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await app.domain(key, 'tbird.test');
  await createMailbox(app, key, 'tbird.test', 'ann@tbird.test', 'a-long-password');
  const address = 'ann@tbird.test';
  const expected = {
    version: '1.1',
    domain: 'tbird.test',
    incoming: [{ type: 'imap', hostname: 'mx.mailstead.test', port: 993, socketType: 'SSL', username: address, authentication: 'password-cleartext' }],
    outgoing: [
      { type: 'smtp', hostname: 'mx.mailstead.test', port: 465, socketType: 'SSL', username: address, authentication: 'password-cleartext' },
      { type: 'smtp', hostname: 'mx.mailstead.test', port: 587, socketType: 'STARTTLS', username: address, authentication: 'password-cleartext' },
    ],
  };

  // Thunderbird's first lookup: https://<domain>/.well-known/autoconfig/mail/config-v1.1.xml?emailaddress=<address>
  const wellKnown = await lookup(app, 'tbird.test', `/.well-known/autoconfig/mail/config-v1.1.xml?emailaddress=${encodeURIComponent(address)}`);
  t.is(wellKnown.status, 200);
  t.regex(wellKnown.type, /^application\/xml/);
  t.deepEqual(settingsOf(wellKnown.text, address), expected);

  // Its second: http://autoconfig.<domain>/mail/config-v1.1.xml?emailaddress=<address>
  const autoconfigHost = await lookup(app, 'autoconfig.tbird.test', `/mail/config-v1.1.xml?emailaddress=${encodeURIComponent(address)}`);
  t.is(autoconfigHost.status, 200);
  t.deepEqual(settingsOf(autoconfigHost.text, address), expected);

  // The domain comes from the Host header alone when no address is given (with a port, as a browser sends it).
  const byHost = await lookup(app, `autoconfig.tbird.test:${app.httpPort}`, '/mail/config-v1.1.xml');
  t.is(byHost.status, 200);
  t.deepEqual(settingsOf(byHost.text, address), expected);
});

test('domains this box does not host are 404 at both URLs, whatever the Host header says', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await app.domain(key, 'hosted-tb.test');
  t.is((await lookup(app, 'elsewhere.test', '/.well-known/autoconfig/mail/config-v1.1.xml?emailaddress=bob%40elsewhere.test')).status, 404);
  t.is((await lookup(app, 'autoconfig.elsewhere.test', '/mail/config-v1.1.xml')).status, 404);
  // The address decides over the Host header: a hosted Host does not answer for another domain's address.
  t.is((await lookup(app, 'autoconfig.hosted-tb.test', '/mail/config-v1.1.xml?emailaddress=bob%40elsewhere.test')).status, 404);
  const wrongMethod = await request(`http://127.0.0.1:${app.httpPort}/mail/config-v1.1.xml`, { method: 'POST', headers: { host: 'autoconfig.hosted-tb.test' }, body: '' });
  t.is(wrongMethod.statusCode, 405);
  t.is(wrongMethod.headers.allow, 'GET, HEAD');
  await wrongMethod.body.dump();
});
