import type { ExecutionContext } from 'ava';
import dns2, { Packet } from 'dns2';
import { createPromiseResolver } from '../../src/mailauth/dns.js';

// RFC 1035 4.1.1 (dns2 has them at run time, not in its types).
const RCODE = { SERVFAIL: 2, NXDOMAIN: 3 } as const;

type Record =
  | { type: 'A' | 'AAAA'; address: string }
  | { type: 'MX'; exchange: string; priority: number }
  | { type: 'TXT'; data: string[] };

/**
 * An authoritative DNS server on 127.0.0.1 (UDP) for the outbound tests: A, AAAA, MX and TXT records
 * the test sets, NXDOMAIN for unknown names, NODATA for known names without the asked type, and
 * names that answer SERVFAIL or never answer. Closed after the test.
 */
export async function startMxZone(t: ExecutionContext) {
  const names = new Map<string, Record[]>();
  const failing = new Set<string>();
  const silent = new Set<string>();
  const queries: string[] = [];
  const typeCode = { A: Packet.TYPE.A, AAAA: Packet.TYPE.AAAA, MX: Packet.TYPE.MX, TXT: Packet.TYPE.TXT } as const;

  const server = dns2.createServer({
    udp: true,
    handle: (request: any, send: (r: any) => void) => {
      const response = Packet.createResponseFromRequest(request);
      response.header.aa = 1;
      const [q] = request.questions;
      const name = String(q.name).toLowerCase().replace(/\.$/, '');
      queries.push(`${q.type} ${name}`);
      if (silent.has(name)) return;
      if (failing.has(name)) {
        response.header.rcode = RCODE.SERVFAIL;
        send(response);
        return;
      }
      const records = names.get(name);
      if (!records) response.header.rcode = RCODE.NXDOMAIN;
      for (const r of records ?? []) {
        if (typeCode[r.type] !== q.type) continue;
        const base = { name: q.name, type: q.type, class: Packet.CLASS.IN, ttl: 1 };
        if (r.type === 'MX') response.answers.push({ ...base, exchange: r.exchange, priority: r.priority } as any);
        else if (r.type === 'TXT') response.answers.push({ ...base, data: r.data } as any);
        else response.answers.push({ ...base, address: r.address } as any);
      }
      send(response);
    },
  } as any);
  const listening = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const port = listening.udp!.port;
  t.teardown(() => server.close());

  const add = (name: string, record: Record) => {
    const key = name.toLowerCase();
    names.set(key, [...(names.get(key) ?? []), record]);
  };
  return {
    port,
    server: `127.0.0.1:${port}`,
    queries,
    /** A resolver over this server, as the app builds it from MAILSTEAD_DNS_SERVERS. */
    resolver(timeoutMs = 3000) { return createPromiseResolver([`127.0.0.1:${port}`], timeoutMs); },
    a(name: string, address: string) { add(name, { type: 'A', address }); },
    aaaa(name: string, address: string) { add(name, { type: 'AAAA', address }); },
    mx(name: string, exchange: string, priority: number) { add(name, { type: 'MX', exchange, priority }); },
    /** A TXT record of one or more character-strings (values over 255 bytes are split). */
    txt(name: string, value: string) {
      const data: string[] = [];
      for (let i = 0; i < value.length; i += 255) data.push(value.slice(i, i + 255));
      add(name, { type: 'TXT', data: data.length > 0 ? data : [''] });
    },
    /** The name exists but has no records (NODATA for every type). */
    empty(name: string) { names.set(name.toLowerCase(), names.get(name.toLowerCase()) ?? []); },
    /** Removes a name's records (it becomes NXDOMAIN). */
    remove(name: string) { names.delete(name.toLowerCase()); },
    servfail(name: string) { failing.add(name.toLowerCase()); },
    silence(name: string) { silent.add(name.toLowerCase()); },
  };
}
export type MxZone = Awaited<ReturnType<typeof startMxZone>>;
