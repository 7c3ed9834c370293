import { readFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { hostname as osHostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';

/** A token bucket setting: `rate` tokens per second, up to `burst`; null when limiting is off. */
export type RateLimit = { rate: number; burst: number } | null;

/** The typed, validated and frozen configuration of one Mailstead process. */
export interface Config {
  dataDir: string;
  /**
   * A `postgres://` URL puts every store on PostgreSQL (DECISIONS.md section 17); null keeps the
   * embedded SQLite database in the data directory.
   */
  databaseUrl: string | null;
  httpHost: string;
  httpPort: number;
  smtpHost: string;
  smtpPort: number;
  /** IMAP with implicit TLS; null when disabled (empty). */
  imapPort: number | null;
  /** IMAP with STARTTLS; null when disabled (empty). */
  imapStarttlsPort: number | null;
  /** SMTP submission with STARTTLS; null when disabled (empty). */
  submissionPort: number | null;
  /** ManageSieve (DECISIONS.md section 19); null when disabled. */
  managesievePort: number | null;
  /** SMTP submission with implicit TLS; null when disabled (empty). */
  submissionsPort: number | null;
  /** Recipients one mailbox may send to per rolling 24 hours. */
  submissionDailyLimit: number;
  hostname: string;
  mxHosts: [string, string];
  publicUrl: string;
  dnsServers: string[];
  cooldownSeconds: number;
  /** The legacy variant B's sub-domain cooldown (DECISIONS.md section 11), a counter of its own. */
  legacyCooldownSeconds: number;
  webhookAllowPrivate: boolean;
  tlsCert: string | null;
  tlsKey: string | null;
  /** Contact address of the ACME account; null keeps ACME off (DECISIONS.md section 15). */
  acmeEmail: string | null;
  /** The ACME directory URL (RFC 8555 section 7.1.1). */
  acmeDirectory: string;
  rateLimit: RateLimit;
  inboundRateLimit: RateLimit;
  logLevel: string;
  /** Port of remote MX hosts for outbound delivery (25). */
  outboundPort: number;
  /** Allows outbound delivery to loopback, private and own addresses (tests and development only). */
  outboundAllowPrivate: boolean;
  /** Seconds between outbound tries, the last repeated. */
  outboundRetrySchedule: number[];
  /** Seconds after queueing when an outbound item that still fails gives up. */
  outboundMaxAgeSeconds: number;
  /** Milliseconds between IMAP IDLE's looks for changes nobody announced (committed changes wake at once). */
  imapIdlePollMs: number;
  /** Lets mail imports reach loopback and private IMAP hosts (MAILSTEAD_IMPORT_ALLOW_PRIVATE; development and tests only). */
  importAllowPrivate: boolean;
  /** Seconds of storage work (at the measured storage rate) acknowledged mail may wait before new mail is refused for now (SMTP 451 4.3.1, API 503). */
  ingestMaxBacklogSeconds: number;
  /** DNSBL zones asked at RCPT (MAILSTEAD_DNSBL_ZONES, DECISIONS.md section 18); empty: none. */
  dnsblZones: string[];
  /** rspamd's normal worker (MAILSTEAD_RSPAMD_URL), asked before the 250 when spamFilter is rspamd. */
  rspamdUrl: string;
  /** rspamd's controller (MAILSTEAD_RSPAMD_CONTROLLER_URL), where training goes. */
  rspamdControllerUrl: string;
  /** The controller's password (MAILSTEAD_RSPAMD_PASSWORD); empty sends none. Never logged. */
  rspamdPassword: string;
  /** Which spam filter gives verdicts (MAILSTEAD_SPAM_FILTER, DECISIONS.md section 18). */
  spamFilter: 'builtin' | 'rspamd' | 'off';
  /** Days junk is kept before deletion (MAILSTEAD_JUNK_RETENTION_DAYS; 0 keeps it). */
  junkRetentionDays: number;
}

/** Thrown for a configuration value that cannot be used; the message names the variable. */
export class ConfigError extends Error {}

const VARS = [
  'MAILSTEAD_DATA_DIR', 'MAILSTEAD_HTTP_HOST', 'MAILSTEAD_HTTP_PORT', 'MAILSTEAD_SMTP_HOST',
  'MAILSTEAD_SMTP_PORT', 'MAILSTEAD_HOSTNAME', 'MAILSTEAD_MX_HOSTS', 'MAILSTEAD_PUBLIC_URL',
  'MAILSTEAD_DNS_SERVERS', 'MAILSTEAD_COOLDOWN_SECONDS', 'MAILSTEAD_LEGACY_COOLDOWN_SECONDS', 'MAILSTEAD_WEBHOOK_ALLOW_PRIVATE',
  'MAILSTEAD_TLS_CERT', 'MAILSTEAD_TLS_KEY', 'MAILSTEAD_RATE_LIMIT', 'MAILSTEAD_INBOUND_RATE_LIMIT',
  'MAILSTEAD_LOG_LEVEL', 'MAILSTEAD_OUTBOUND_PORT', 'MAILSTEAD_OUTBOUND_ALLOW_PRIVATE', 'MAILSTEAD_IMPORT_ALLOW_PRIVATE',
  'MAILSTEAD_OUTBOUND_RETRY_SCHEDULE', 'MAILSTEAD_OUTBOUND_MAX_AGE_SECONDS',
  'MAILSTEAD_IMAP_PORT', 'MAILSTEAD_IMAP_STARTTLS_PORT', 'MAILSTEAD_IMAP_IDLE_POLL_MS',
  'MAILSTEAD_ACME_EMAIL', 'MAILSTEAD_ACME_DIRECTORY',
  'MAILSTEAD_SUBMISSION_PORT', 'MAILSTEAD_SUBMISSIONS_PORT', 'MAILSTEAD_SUBMISSION_DAILY_LIMIT', 'MAILSTEAD_MANAGESIEVE_PORT',
  'MAILSTEAD_DATABASE_URL', 'MAILSTEAD_INGEST_MAX_BACKLOG_SECONDS',
  'MAILSTEAD_DNSBL_ZONES', 'MAILSTEAD_RSPAMD_URL', 'MAILSTEAD_RSPAMD_CONTROLLER_URL', 'MAILSTEAD_RSPAMD_PASSWORD',
  'MAILSTEAD_SPAM_FILTER', 'MAILSTEAD_JUNK_RETENTION_DAYS',
] as const;
type VarName = (typeof VARS)[number];

const PORT = '^(0|[1-9][0-9]{0,4})$';
const HOST_NAME = '^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$';
// A host name without HOST_NAME's whole-string length check, for an item of a comma list.
const DNS_NAME = HOST_NAME.replace('(?=.{1,253}$)', '').slice(1, -1);
const RATE = '^(0|[0-9]+(\\.[0-9]+)?/[0-9]+)$';
const IP_PORT = '(\\d{1,3}(\\.\\d{1,3}){3}(:\\d{1,5})?|\\[[0-9A-Fa-f:.]+\\](:\\d{1,5})?|[0-9A-Fa-f:]+)';

// The raw, string-valued settings are validated as data; parsing into types comes after.
const rawSchema = {
  type: 'object',
  properties: {
    MAILSTEAD_DATA_DIR: { type: 'string', minLength: 1 },
    // libpq's URI form (pg-connection-string reads it): postgres:// or postgresql://, then anything.
    MAILSTEAD_DATABASE_URL: { type: 'string', pattern: '^$|^postgres(ql)?://\\S+$' },
    MAILSTEAD_HTTP_HOST: { type: 'string', minLength: 1 },
    MAILSTEAD_HTTP_PORT: { type: 'string', pattern: PORT },
    MAILSTEAD_SMTP_HOST: { type: 'string', minLength: 1 },
    MAILSTEAD_SMTP_PORT: { type: 'string', pattern: PORT },
    MAILSTEAD_IMAP_PORT: { type: 'string', pattern: `^$|${PORT}` },
    MAILSTEAD_IMAP_STARTTLS_PORT: { type: 'string', pattern: `^$|${PORT}` },
    MAILSTEAD_IMAP_IDLE_POLL_MS: { type: 'string', pattern: '^[1-9][0-9]{1,6}$' },
    MAILSTEAD_SPAM_FILTER: { type: 'string', enum: ['builtin', 'rspamd', 'off'] },
    MAILSTEAD_JUNK_RETENTION_DAYS: { type: 'string', pattern: '^[0-9]{1,5}$' },
    // Fractions allowed (tests bound a backlog of a few hundred messages); 0 or 0.0 is refused below.
    MAILSTEAD_INGEST_MAX_BACKLOG_SECONDS: { type: 'string', pattern: '^[0-9]{1,6}(\\.[0-9]{1,3})?$' },
    MAILSTEAD_SUBMISSION_PORT: { type: 'string', pattern: `^$|${PORT}` },
    MAILSTEAD_SUBMISSIONS_PORT: { type: 'string', pattern: `^$|${PORT}` },
    MAILSTEAD_MANAGESIEVE_PORT: { type: 'string', pattern: `^$|${PORT}` },
    MAILSTEAD_SUBMISSION_DAILY_LIMIT: { type: 'string', pattern: '^[1-9][0-9]{0,8}$' },
    MAILSTEAD_HOSTNAME: { type: 'string', pattern: `^$|${HOST_NAME}` },
    MAILSTEAD_MX_HOSTS: { type: 'string', pattern: `^$|^${HOST_NAME.slice(1, -1)},${HOST_NAME.slice(1, -1)}$` },
    MAILSTEAD_PUBLIC_URL: { type: 'string', pattern: '^https?://[^\\s/]+(/[^\\s]*[^/\\s])?$' },
    MAILSTEAD_DNS_SERVERS: { type: 'string', pattern: `^$|^${IP_PORT}(,${IP_PORT})*$` },
    MAILSTEAD_COOLDOWN_SECONDS: { type: 'string', pattern: '^[0-9]{1,7}$' },
    MAILSTEAD_LEGACY_COOLDOWN_SECONDS: { type: 'string', pattern: '^[0-9]{1,7}$' },
    MAILSTEAD_WEBHOOK_ALLOW_PRIVATE: { type: 'string', enum: ['true', 'false', '1', '0', 'yes', 'no'] },
    MAILSTEAD_TLS_CERT: { type: 'string' },
    MAILSTEAD_TLS_KEY: { type: 'string' },
    MAILSTEAD_RATE_LIMIT: { type: 'string', pattern: RATE },
    MAILSTEAD_INBOUND_RATE_LIMIT: { type: 'string', pattern: RATE },
    MAILSTEAD_LOG_LEVEL: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    MAILSTEAD_OUTBOUND_PORT: { type: 'string', pattern: '^[1-9][0-9]{0,4}$' },
    MAILSTEAD_OUTBOUND_ALLOW_PRIVATE: { type: 'string', enum: ['true', 'false', '1', '0', 'yes', 'no'] },
    MAILSTEAD_IMPORT_ALLOW_PRIVATE: { type: 'string', enum: ['true', 'false', '1', '0', 'yes', 'no'] },
    MAILSTEAD_OUTBOUND_RETRY_SCHEDULE: { type: 'string', pattern: '^[1-9][0-9]{0,7}(,[1-9][0-9]{0,7}){0,49}$' },
    MAILSTEAD_OUTBOUND_MAX_AGE_SECONDS: { type: 'string', pattern: '^[1-9][0-9]{0,8}$' },
    // A plain mailbox address: the CA sends expiry notices there and refuses anything else.
    MAILSTEAD_ACME_EMAIL: { type: 'string', pattern: '^$|^[^\\s@<>,;"]+@[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$' },
    // RFC 8555 section 6.1: ACME is spoken over HTTPS only.
    MAILSTEAD_ACME_DIRECTORY: { type: 'string', pattern: '^https://[^\\s/]+(/[^\\s]*)?$' },
    MAILSTEAD_DNSBL_ZONES: { type: 'string', pattern: `^$|^${DNS_NAME}(,${DNS_NAME})*$` },
    MAILSTEAD_RSPAMD_URL: { type: 'string', pattern: '^https?://[^\\s/]+(/[^\\s]*[^/\\s])?$' },
    MAILSTEAD_RSPAMD_CONTROLLER_URL: { type: 'string', pattern: '^https?://[^\\s/]+(/[^\\s]*[^/\\s])?$' },
    MAILSTEAD_RSPAMD_PASSWORD: { type: 'string' },
  },
} as const;

const validateRaw = new Ajv({ allErrors: false }).compile(rawSchema);

/** The package root (where package.json is), whether running from src/ or dist/src/. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above ' + import.meta.url);
    dir = up;
  }
  return dir;
}

function readDefaults(): Record<VarName, string> {
  const file = join(packageRoot(), 'config', 'default.json');
  return JSON.parse(readFileSync(file, 'utf8')) as Record<VarName, string>;
}

function parseRate(v: string): RateLimit {
  if (v === '0') return null;
  const [rate, burst] = v.split('/').map(Number);
  return rate > 0 && burst > 0 ? { rate, burst } : null;
}

function check(ok: boolean, name: VarName, value: string, why: string): void {
  if (!ok) throw new ConfigError(`${name}=${JSON.stringify(value)} is invalid: ${why}`);
}

/** Builds the configuration from config/default.json overridden by MAILSTEAD_* variables of `env`. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<Config> {
  const defaults = readDefaults();
  const raw = {} as Record<VarName, string>;
  for (const name of VARS) raw[name] = env[name] ?? defaults[name] ?? '';
  if (!validateRaw(raw)) {
    const err = validateRaw.errors![0];
    const name = err.instancePath.slice(1) as VarName;
    throw new ConfigError(`${name}=${JSON.stringify(raw[name])} is invalid: ${err.message}`);
  }
  const httpPort = Number(raw.MAILSTEAD_HTTP_PORT);
  const smtpPort = Number(raw.MAILSTEAD_SMTP_PORT);
  check(httpPort <= 65535, 'MAILSTEAD_HTTP_PORT', raw.MAILSTEAD_HTTP_PORT, 'must be 0 to 65535');
  check(smtpPort <= 65535, 'MAILSTEAD_SMTP_PORT', raw.MAILSTEAD_SMTP_PORT, 'must be 0 to 65535');
  const ingestMaxBacklogSeconds = Number(raw.MAILSTEAD_INGEST_MAX_BACKLOG_SECONDS);
  check(ingestMaxBacklogSeconds > 0, 'MAILSTEAD_INGEST_MAX_BACKLOG_SECONDS', raw.MAILSTEAD_INGEST_MAX_BACKLOG_SECONDS, 'must be above 0');
  const outboundPort = Number(raw.MAILSTEAD_OUTBOUND_PORT);
  check(outboundPort <= 65535, 'MAILSTEAD_OUTBOUND_PORT', raw.MAILSTEAD_OUTBOUND_PORT, 'must be 1 to 65535');
  const optionalPort = (name: 'MAILSTEAD_IMAP_PORT' | 'MAILSTEAD_IMAP_STARTTLS_PORT' | 'MAILSTEAD_SUBMISSION_PORT' | 'MAILSTEAD_SUBMISSIONS_PORT' | 'MAILSTEAD_MANAGESIEVE_PORT') => {
    if (raw[name] === '') return null;
    const n = Number(raw[name]);
    check(n <= 65535, name, raw[name], 'must be 0 to 65535, or empty to disable');
    return n;
  };
  const host = (raw.MAILSTEAD_HOSTNAME || osHostname() || 'localhost').toLowerCase();
  const mx = raw.MAILSTEAD_MX_HOSTS ? raw.MAILSTEAD_MX_HOSTS.toLowerCase().split(',') : [`mx1.${host}`, `mx2.${host}`];
  const tlsCert = raw.MAILSTEAD_TLS_CERT || null;
  const tlsKey = raw.MAILSTEAD_TLS_KEY || null;
  check(!!tlsCert === !!tlsKey, tlsCert ? 'MAILSTEAD_TLS_KEY' : 'MAILSTEAD_TLS_CERT', '', 'MAILSTEAD_TLS_CERT and MAILSTEAD_TLS_KEY go together');
  if (tlsCert) check(existsSync(tlsCert), 'MAILSTEAD_TLS_CERT', tlsCert, 'file not found');
  if (tlsKey) check(existsSync(tlsKey), 'MAILSTEAD_TLS_KEY', tlsKey, 'file not found');
  return Object.freeze({
    dataDir: resolve(raw.MAILSTEAD_DATA_DIR),
    databaseUrl: raw.MAILSTEAD_DATABASE_URL || null,
    httpHost: raw.MAILSTEAD_HTTP_HOST,
    httpPort,
    smtpHost: raw.MAILSTEAD_SMTP_HOST,
    smtpPort,
    imapPort: optionalPort('MAILSTEAD_IMAP_PORT'),
    imapStarttlsPort: optionalPort('MAILSTEAD_IMAP_STARTTLS_PORT'),
    submissionPort: optionalPort('MAILSTEAD_SUBMISSION_PORT'),
    submissionsPort: optionalPort('MAILSTEAD_SUBMISSIONS_PORT'),
    managesievePort: optionalPort('MAILSTEAD_MANAGESIEVE_PORT'),
    submissionDailyLimit: Number(raw.MAILSTEAD_SUBMISSION_DAILY_LIMIT),
    hostname: host,
    mxHosts: [mx[0], mx[1]] as [string, string],
    publicUrl: raw.MAILSTEAD_PUBLIC_URL,
    dnsServers: raw.MAILSTEAD_DNS_SERVERS ? raw.MAILSTEAD_DNS_SERVERS.split(',') : [],
    cooldownSeconds: Number(raw.MAILSTEAD_COOLDOWN_SECONDS),
    legacyCooldownSeconds: Number(raw.MAILSTEAD_LEGACY_COOLDOWN_SECONDS),
    webhookAllowPrivate: ['true', '1', 'yes'].includes(raw.MAILSTEAD_WEBHOOK_ALLOW_PRIVATE),
    tlsCert,
    tlsKey,
    acmeEmail: raw.MAILSTEAD_ACME_EMAIL || null,
    acmeDirectory: raw.MAILSTEAD_ACME_DIRECTORY,
    rateLimit: parseRate(raw.MAILSTEAD_RATE_LIMIT),
    inboundRateLimit: parseRate(raw.MAILSTEAD_INBOUND_RATE_LIMIT),
    logLevel: raw.MAILSTEAD_LOG_LEVEL,
    outboundPort,
    outboundAllowPrivate: ['true', '1', 'yes'].includes(raw.MAILSTEAD_OUTBOUND_ALLOW_PRIVATE),
    importAllowPrivate: ['true', '1', 'yes'].includes(raw.MAILSTEAD_IMPORT_ALLOW_PRIVATE),
    outboundRetrySchedule: raw.MAILSTEAD_OUTBOUND_RETRY_SCHEDULE.split(',').map(Number),
    outboundMaxAgeSeconds: Number(raw.MAILSTEAD_OUTBOUND_MAX_AGE_SECONDS),
    imapIdlePollMs: Number(raw.MAILSTEAD_IMAP_IDLE_POLL_MS),
    ingestMaxBacklogSeconds,
    dnsblZones: raw.MAILSTEAD_DNSBL_ZONES ? raw.MAILSTEAD_DNSBL_ZONES.toLowerCase().split(',') : [],
    rspamdUrl: raw.MAILSTEAD_RSPAMD_URL,
    rspamdControllerUrl: raw.MAILSTEAD_RSPAMD_CONTROLLER_URL,
    rspamdPassword: raw.MAILSTEAD_RSPAMD_PASSWORD,
    spamFilter: raw.MAILSTEAD_SPAM_FILTER as Config['spamFilter'],
    junkRetentionDays: Number(raw.MAILSTEAD_JUNK_RETENTION_DAYS),
  });
}
