import test from 'ava';
import { XMLParser } from 'fast-xml-parser';
import { request } from 'undici';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { createMailbox } from '../helpers/mailboxes.js';

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', parseTagValue: false, isArray: (name) => name === 'Protocol' });

/** Outlook's request body (MS-OXDISCO). */
const outlookRequest = (address: string) => `<?xml version="1.0" encoding="utf-8"?>
<Autodiscover xmlns="http://schemas.microsoft.com/exchange/autodiscover/outlook/requestschema/2006">
  <Request>
    <EMailAddress>${address}</EMailAddress>
    <AcceptableResponseSchema>http://schemas.microsoft.com/exchange/autodiscover/outlook/responseschema/2006a</AcceptableResponseSchema>
  </Request>
</Autodiscover>`;

async function autodiscover(app: TestClient, path: string, body: string) {
  const res = await request(`http://127.0.0.1:${app.httpPort}${path}`, { method: 'POST', headers: { host: 'autodiscover.outlook.test', 'content-type': 'text/xml' }, body });
  return { status: res.statusCode, type: String(res.headers['content-type']), text: await res.body.text() };
}

/**
 * An Apple plist as a JS value (dict, array, string, integer, true/false), read with an XML parser
 * that keeps document order, as plist readers must: a dict is its keys and values in turn.
 */
function readPlist(text: string): any {
  const nodes = new XMLParser({ preserveOrder: true, parseTagValue: false, ignoreDeclaration: true }).parse(text);
  const plist = nodes.find((n: any) => n.plist).plist;
  const value = (node: any): any => {
    const [tag] = Object.keys(node);
    const children = node[tag];
    const text = () => children.map((c: any) => c['#text'] ?? '').join('');
    switch (tag) {
      case 'string': return text();
      case 'integer': return Number(text());
      case 'true': return true;
      case 'false': return false;
      case 'array': return children.map(value);
      case 'dict': {
        const out: Record<string, unknown> = {};
        for (let i = 0; i < children.length; i += 2) out[children[i].key.map((c: any) => c['#text']).join('')] = value(children[i + 1]);
        return out;
      }
      default: throw new Error(`unexpected plist element ${tag}`);
    }
  };
  return value(plist[0]);
}

test('Outlook autodiscover answers the address with IMAP 993 SSL and SMTP 465 SSL and 587 STARTTLS, at both spellings of the path', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await app.domain(key, 'outlook.test');
  for (const path of ['/autodiscover/autodiscover.xml', '/Autodiscover/Autodiscover.xml']) {
    const r = await autodiscover(app, path, outlookRequest('Ann@Outlook.test'));
    t.is(r.status, 200, path);
    t.regex(r.type, /^application\/xml/);
    const doc = xml.parse(r.text, true);
    t.is(doc.Autodiscover['@xmlns'], 'http://schemas.microsoft.com/exchange/autodiscover/responseschema/2006');
    const response = doc.Autodiscover.Response;
    t.is(response['@xmlns'], 'http://schemas.microsoft.com/exchange/autodiscover/outlook/responseschema/2006a');
    t.is(response.Account.AccountType, 'email');
    t.is(response.Account.Action, 'settings');
    const protocols = response.Account.Protocol.map((p: any) => ({ type: p.Type, server: p.Server, port: Number(p.Port), login: p.LoginName, ssl: p.SSL, encryption: p.Encryption, spa: p.SPA }));
    t.deepEqual(protocols, [
      { type: 'IMAP', server: 'mx.mailstead.test', port: 993, login: 'ann@outlook.test', ssl: 'on', encryption: 'SSL', spa: 'off' },
      { type: 'SMTP', server: 'mx.mailstead.test', port: 465, login: 'ann@outlook.test', ssl: 'on', encryption: 'SSL', spa: 'off' },
      { type: 'SMTP', server: 'mx.mailstead.test', port: 587, login: 'ann@outlook.test', ssl: 'on', encryption: 'TLS', spa: 'off' },
    ]);
  }
  t.is((await autodiscover(app, '/autodiscover/autodiscover.xml', outlookRequest('bob@not-hosted.test'))).status, 404);
  t.is((await autodiscover(app, '/autodiscover/autodiscover.xml', '<Autodiscover><Request></Request></Autodiscover>')).status, 400);
  t.is((await autodiscover(app, '/autodiscover/autodiscover.xml', 'not xml at all <<<')).status, 400);
  // An entity is not expanded: the address is taken as written, and "&e;" is no address.
  t.is((await autodiscover(app, '/autodiscover/autodiscover.xml', '<!DOCTYPE a [<!ENTITY e "ann@outlook.test">]><Autodiscover><Request><EMailAddress>&e;</EMailAddress></Request></Autodiscover>')).status, 400);
});

test('the Apple profile sets up the mailbox without its password, for the owner only', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await app.domain(key, 'apple.test');
  await createMailbox(app, key, 'apple.test', 'ann@apple.test', 'secret-password-123', 'Ann Apple');
  const res = await request(`${app.base}/v1/mailboxes/${encodeURIComponent('ann@apple.test')}/mobileconfig`, { headers: { authorization: `Bearer ${key}` } });
  t.is(res.statusCode, 200);
  t.is(res.headers['content-type'], 'application/x-apple-aspen-config');
  t.regex(String(res.headers['content-disposition']), /attachment; filename="ann@apple\.test\.mobileconfig"/);
  const text = await res.body.text();
  t.false(text.includes('secret-password-123'));
  t.false(/Password<\/key>\s*<string>/.test(text), 'no IncomingPassword or OutgoingPassword value');
  const profile = readPlist(text);
  t.is(profile.PayloadType, 'Configuration');
  t.is(profile.PayloadVersion, 1);
  t.regex(profile.PayloadUUID, /^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/);
  const [mail] = profile.PayloadContent;
  t.like(mail, {
    PayloadType: 'com.apple.mail.managed',
    EmailAccountType: 'EmailTypeIMAP',
    EmailAccountName: 'Ann Apple',
    EmailAddress: 'ann@apple.test',
    IncomingMailServerHostName: 'mx.mailstead.test',
    IncomingMailServerPortNumber: 993,
    IncomingMailServerUseSSL: true,
    IncomingMailServerUsername: 'ann@apple.test',
    IncomingMailServerAuthentication: 'EmailAuthPassword',
    OutgoingMailServerHostName: 'mx.mailstead.test',
    OutgoingMailServerPortNumber: 465,
    OutgoingMailServerUseSSL: true,
    OutgoingMailServerUsername: 'ann@apple.test',
    OutgoingPasswordSameAsIncomingPassword: true,
  });
  t.false('IncomingPassword' in mail);
  // The same profile each time (same UUIDs), so installing it again replaces it.
  const again = await app.request('GET', '/v1/mailboxes/ann@apple.test/mobileconfig', { key });
  t.is(readPlist(again.body).PayloadUUID, profile.PayloadUUID);

  // Another tenant's key sees no such mailbox; a key without read is refused; no key is 401.
  const other = await app.keyFor();
  t.is((await app.get('/v1/mailboxes/ann@apple.test/mobileconfig', other)).status, 404);
  const writeOnly = await app.keyFor({ perms: ['write'] });
  t.is((await app.get('/v1/mailboxes/ann@apple.test/mobileconfig', writeOnly)).status, 403);
  t.is((await app.get('/v1/mailboxes/ann@apple.test/mobileconfig')).status, 401);
  t.is((await app.get('/v1/mailboxes/nobody@apple.test/mobileconfig', key)).status, 404);
  t.is((await app.get('/v1/mailboxes/not-an-address/mobileconfig', key)).status, 422);
});
