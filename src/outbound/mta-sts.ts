import { request } from 'node:https';
import { rootCertificates } from 'node:tls';
import { parsePolicy } from 'mailauth/lib/mta-sts.js';
import type { DeliveryResolver } from './dns-cache.js';

/** A domain's MTA-STS policy (RFC 8461 section 3.2), with the id of the TXT record it was fetched under. */
export interface MtaStsPolicy { id: string; mode: 'enforce' | 'testing' | 'none'; mx: string[]; maxAge: number }

export interface MtaSts {
  /** The policy to apply to mail for `domain`; null: no policy (or the fetch failed and nothing valid is cached). */
  policy(domain: string): Promise<MtaStsPolicy | null>;
  /** Whether `mxHost` matches one of the policy's `mx` patterns (RFC 8461 section 4.1). The caller applies the mode. */
  mxAllowed(policy: MtaStsPolicy, mxHost: string): boolean;
}

export interface MtaStsOptions {
  resolver: DeliveryResolver;
  now: () => Date;
  /** The policy host's HTTPS port; 443 unless a test serves it elsewhere. */
  httpsPort?: number;
  /** An extra CA trusted next to the public roots (tests). */
  ca?: Buffer | string;
  /** Addresses not to fetch from (e.g. private ones); by default any: the certificate check is what is relied on. */
  refuseAddress?: (ip: string) => boolean;
  /** Bound on one policy fetch; RFC 8461 3.3 suggests at most a minute. */
  timeoutMs?: number;
}

const POLICY_PATH = '/.well-known/mta-sts.txt';
/** RFC 8461 3.3: senders may refuse policies larger than 64 KiB. */
const MAX_POLICY_BYTES = 64 * 1024;
/** After a failed fetch the domain is not fetched again for this long (per TXT id), so a burst of mail costs one try. */
const FETCH_FAILURE_BACKOFF_MS = 60_000;
const MAX_CACHED_DOMAINS = 10_000;
const DEFAULT_TIMEOUT_MS = 15_000;

const bare = (name: string) => name.trim().toLowerCase().replace(/\.$/, '');

/** The `id` of the domain's single `v=STSv1` TXT record; 'none' without one (or with several, RFC 8461 3.1); 'error' when DNS could not say. */
async function lookupId(domain: string, resolver: DeliveryResolver): Promise<{ kind: 'id'; id: string } | { kind: 'none' } | { kind: 'error' }> {
  let records: string[][];
  try {
    records = await resolver.resolveTxt(`_mta-sts.${domain}`);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOTFOUND' || code === 'ENODATA' ? { kind: 'none' } : { kind: 'error' };
  }
  const sts = records.map((chunks) => chunks.join('')).filter((r) => /^v=STSv1;/.test(r));
  if (sts.length !== 1) return { kind: 'none' };
  const fields = new Map(sts[0].split(';').map((f) => f.trim()).filter(Boolean).map((f) => {
    const eq = f.indexOf('=');
    return [f.slice(0, eq).trim().toLowerCase(), f.slice(eq + 1).trim()] as const;
  }));
  const id = fields.get('id');
  return id && /^[A-Za-z0-9]{1,32}$/.test(id) ? { kind: 'id', id } : { kind: 'none' };
}

/** GET over HTTPS from one address, the certificate checked for `servername`; no redirects followed (RFC 8461 3.3). */
function fetchFrom(address: string, servername: string, opts: MtaStsOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: address,
      servername,
      port: opts.httpsPort ?? 443,
      path: POLICY_PATH,
      method: 'GET',
      headers: { host: servername, accept: 'text/plain' },
      ca: opts.ca ? [...rootCertificates, opts.ca.toString()] : undefined,
      rejectUnauthorized: true,
      agent: false,
      timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    }, (res) => {
      const type = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      if (res.statusCode !== 200) { res.resume(); reject(new Error(`policy fetch answered HTTP ${res.statusCode}`)); return; }
      if (type !== 'text/plain') { res.resume(); reject(new Error(`policy served as ${type || 'no media type'}, not text/plain`)); return; }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_POLICY_BYTES) { req.destroy(new Error('policy larger than 64 KiB')); return; }
        chunks.push(chunk);
      });
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('policy fetch timed out')));
    req.on('error', reject);
    req.end();
  });
}

async function fetchPolicy(domain: string, id: string, opts: MtaStsOptions): Promise<MtaStsPolicy> {
  const host = `mta-sts.${domain}`;
  const [v4, v6] = await Promise.allSettled([opts.resolver.resolve4(host), opts.resolver.resolve6(host)]);
  const addresses = [v4, v6].flatMap((r) => (r.status === 'fulfilled' ? r.value : []))
    .filter((ip) => !opts.refuseAddress?.(ip));
  if (addresses.length === 0) throw new Error(`${host} has no usable address`);
  let lastError: unknown;
  for (const address of addresses.slice(0, 4)) {
    let body: string;
    try {
      body = await fetchFrom(address, host, opts);
    } catch (err) {
      lastError = err;
      continue;
    }
    const parsed = parsePolicy(body);
    return { id, mode: parsed.mode as MtaStsPolicy['mode'], mx: parsed.mx ?? [], maxAge: parsed.maxAge ?? 0 };
  }
  throw lastError instanceof Error ? lastError : new Error(`policy fetch from ${host} failed`);
}

/**
 * MTA-STS policies (RFC 8461) with an in-memory cache: a policy is kept until its max_age runs out
 * and refetched when the TXT id changes. When DNS or the fetch fails, a cached policy that has not
 * expired still applies (section 3.3); without one the domain is treated as having no policy.
 */
export function createMtaSts(opts: MtaStsOptions): MtaSts {
  const cache = new Map<string, { policy: MtaStsPolicy; expires: number }>();
  const failures = new Map<string, { id: string; until: number }>();
  const inFlight = new Map<string, Promise<MtaStsPolicy | null>>();

  async function discover(domain: string): Promise<MtaStsPolicy | null> {
    const now = opts.now().getTime();
    const cached = cache.get(domain);
    const fresh = cached && cached.expires > now ? cached.policy : null;
    const txt = await lookupId(domain, opts.resolver);
    if (txt.kind !== 'id') return fresh;
    if (fresh && fresh.id === txt.id) return fresh;
    const failed = failures.get(domain);
    if (failed && failed.id === txt.id && failed.until > now) return fresh;
    try {
      const policy = await fetchPolicy(domain, txt.id, opts);
      failures.delete(domain);
      cache.delete(domain);
      if (cache.size >= MAX_CACHED_DOMAINS) cache.delete(cache.keys().next().value as string);
      cache.set(domain, { policy, expires: opts.now().getTime() + policy.maxAge * 1000 });
      return policy;
    } catch {
      if (failures.size >= MAX_CACHED_DOMAINS) failures.delete(failures.keys().next().value as string);
      failures.set(domain, { id: txt.id, until: opts.now().getTime() + FETCH_FAILURE_BACKOFF_MS });
      return fresh;
    }
  }

  return {
    policy(domain) {
      const key = bare(domain);
      // Mail for one domain arrives in bursts: concurrent lookups share one discovery.
      let pending = inFlight.get(key);
      if (!pending) {
        pending = discover(key).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      return pending;
    },

    mxAllowed(policy, mxHost) {
      const host = bare(mxHost);
      return policy.mx.some((pattern) => {
        const p = bare(pattern);
        if (!p.startsWith('*.')) return p === host;
        // A wildcard stands for exactly one leftmost label: *.example.com matches mx.example.com only.
        const dot = host.indexOf('.');
        return dot > 0 && host.slice(dot + 1) === p.slice(2);
      });
    },
  };
}
