import test from 'ava';
import { ConfigError, loadConfig } from '../src/config.js';

test('defaults come from config/default.json', (t) => {
  const c = loadConfig({ MAILSTEAD_HOSTNAME: 'mail.example.org' });
  t.is(c.httpPort, 8080);
  t.is(c.smtpPort, 2525);
  t.is(c.httpHost, '0.0.0.0');
  t.deepEqual(c.mxHosts, ['mx1.mail.example.org', 'mx2.mail.example.org']);
  t.is(c.publicUrl, 'http://localhost:8080');
  t.is(c.cooldownSeconds, 300);
  t.false(c.webhookAllowPrivate);
  t.deepEqual(c.rateLimit, { rate: 20, burst: 100 });
  t.deepEqual(c.inboundRateLimit, { rate: 5000, burst: 10000 });
  t.deepEqual(c.dnsServers, []);
  t.is(c.tlsCert, null);
  t.true(Object.isFrozen(c));
});

test('environment variables override every default', (t) => {
  const c = loadConfig({
    MAILSTEAD_DATA_DIR: '/tmp/x', MAILSTEAD_HTTP_PORT: '0', MAILSTEAD_SMTP_PORT: '25', MAILSTEAD_MX_HOSTS: 'a.example.org,b.example.org',
    MAILSTEAD_DNS_SERVERS: '127.0.0.1:5353,1.1.1.1', MAILSTEAD_RATE_LIMIT: '0', MAILSTEAD_WEBHOOK_ALLOW_PRIVATE: 'true',
    MAILSTEAD_COOLDOWN_SECONDS: '5', MAILSTEAD_LOG_LEVEL: 'silent',
  });
  t.is(c.dataDir, '/tmp/x');
  t.is(c.httpPort, 0);
  t.is(c.smtpPort, 25);
  t.deepEqual(c.mxHosts, ['a.example.org', 'b.example.org']);
  t.deepEqual(c.dnsServers, ['127.0.0.1:5353', '1.1.1.1']);
  t.is(c.rateLimit, null);
  t.true(c.webhookAllowPrivate);
  t.is(c.cooldownSeconds, 5);
});

test('a bad value is refused with a message that names the variable', (t) => {
  const bad: Record<string, string> = {
    MAILSTEAD_HTTP_PORT: 'http', MAILSTEAD_SMTP_PORT: '70000', MAILSTEAD_RATE_LIMIT: 'fast', MAILSTEAD_LOG_LEVEL: 'loud',
    MAILSTEAD_PUBLIC_URL: 'localhost:8080', MAILSTEAD_MX_HOSTS: 'only-one', MAILSTEAD_WEBHOOK_ALLOW_PRIVATE: 'perhaps',
    MAILSTEAD_DNS_SERVERS: 'dns.google', MAILSTEAD_COOLDOWN_SECONDS: '-1', MAILSTEAD_TLS_CERT: '/nonexistent.pem',
  };
  for (const [name, value] of Object.entries(bad)) {
    const err = t.throws(() => loadConfig({ [name]: value }), { instanceOf: ConfigError }, name);
    t.true(err!.message.includes(name), `${name}: ${err!.message}`);
  }
});
