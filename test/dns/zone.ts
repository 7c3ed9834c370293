import { createSocket, type Socket } from 'node:dgram';
import type { ExecutionContext } from 'ava';
import dns2, { Packet } from 'dns2';

// RFC 1035 4.1.1 (dns2 has them at run time as Packet.RCODE, but not in its types).
const RCODE = { SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

// RFC 2782: an SRV target is never compressed, and c-ares in Node 22 rejects an answer where it is
// (EBADRESP). dns2 compresses every name it writes, so the target is written out in full.
(Packet as any).Resource.SRV.encode = function encodeSrv(record: any, writer: any) {
  writer.write(record.priority, 16);
  writer.write(record.weight, 16);
  writer.write(record.port, 16);
  const names = writer.names;
  writer.names = undefined;
  (Packet as any).Name.encode(record.target, writer);
  writer.names = names;
};

type Rr = { type: 'MX'; exchange: string; priority: number } | { type: 'TXT'; chunks: string[] }
  | { type: 'SRV'; priority: number; weight: number; port: number; target: string } | { type: 'CNAME'; target: string }
  | { type: 'A'; address: string };

/** Splits a TXT value into character-strings of at most 255 bytes, as zone files do for long records. */
export function chunk(value: string, size = 255): string[] {
  const out: string[] = [];
  for (let i = 0; i < value.length; i += size) out.push(value.slice(i, i + size));
  return out.length > 0 ? out : [''];
}

/**
 * An authoritative DNS server for tests on 127.0.0.1 (UDP, and TCP on the same port for answers
 * too long for 512-byte UDP), whose zone the test edits. `mode` makes every answer SERVFAIL or
 * REFUSED. Closed after the test.
 */
export async function startZone(t: ExecutionContext) {
  const names = new Map<string, Rr[]>();
  let mode: 'answer' | 'servfail' | 'refused' = 'answer';
  const queries: string[] = [];
  /** Names under these suffixes are never answered (a zone whose servers are down). */
  const silent = new Set<string>();
  /** Names under these suffixes get SERVFAIL. */
  const failing = new Set<string>();
  const under = (name: string, suffixes: Set<string>) => [...suffixes].some((x) => name === x || name.endsWith(`.${x}`));

  function handle(request: any, send: (r: any) => Promise<unknown>) {
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    const [q] = request.questions;
    const name = String(q.name).toLowerCase().replace(/\.$/, '');
    const typeName = ({ [Packet.TYPE.A]: 'A', [Packet.TYPE.MX]: 'MX', [Packet.TYPE.TXT]: 'TXT', [Packet.TYPE.SRV]: 'SRV', [Packet.TYPE.CNAME]: 'CNAME' } as Record<number, string>)[q.type];
    queries.push(`${typeName ?? q.type} ${name}`);
    if (under(name, silent)) return;
    if (mode !== 'answer' || under(name, failing)) {
      response.header.rcode = mode === 'refused' ? RCODE.REFUSED : RCODE.SERVFAIL;
      void send(response);
      return;
    }
    const rrs = names.get(name);
    if (!rrs) response.header.rcode = RCODE.NXDOMAIN;
    for (const rr of rrs ?? []) {
      if (rr.type === 'MX' && q.type === Packet.TYPE.MX) {
        response.answers.push({ name: q.name, type: Packet.TYPE.MX, class: Packet.CLASS.IN, ttl: 0, exchange: rr.exchange, priority: rr.priority } as any);
      } else if (rr.type === 'TXT' && q.type === Packet.TYPE.TXT) {
        response.answers.push({ name: q.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 0, data: rr.chunks } as any);
      } else if (rr.type === 'SRV' && q.type === Packet.TYPE.SRV) {
        response.answers.push({ name: q.name, type: Packet.TYPE.SRV, class: Packet.CLASS.IN, ttl: 0, priority: rr.priority, weight: rr.weight, port: rr.port, target: rr.target } as any);
      } else if (rr.type === 'A' && q.type === Packet.TYPE.A) {
        response.answers.push({ name: q.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 0, address: rr.address } as any);
      } else if (rr.type === 'CNAME' && q.type === Packet.TYPE.CNAME) {
        response.answers.push({ name: q.name, type: Packet.TYPE.CNAME, class: Packet.CLASS.IN, ttl: 0, domain: rr.target } as any);
      }
    }
    void send(response);
  }

  // UDP takes a free port; TCP must share its number, which is rarely taken: try a few times.
  let udp = dns2.createUDPServer(handle as any);
  let tcp = dns2.createTCPServer(handle as any);
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    await udp.listen(0, '127.0.0.1');
    port = udp.address().port;
    const bound = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (bound) break;
    await new Promise<void>((r) => udp.close(() => r()));
    if (attempt >= 10) throw new Error('no port free for both UDP and TCP');
    udp = dns2.createUDPServer(handle as any);
    tcp = dns2.createTCPServer(handle as any);
  }
  t.teardown(async () => {
    await new Promise<void>((r) => udp.close(() => r()));
    await new Promise<void>((r) => tcp.close(() => r()));
  });

  const add = (name: string, rr: Rr) => {
    const key = name.toLowerCase();
    names.set(key, [...(names.get(key) ?? []), rr]);
  };

  return {
    port,
    /** Every query seen, as `TYPE name`. */
    queries,
    /** Answer normally, or fail every query. */
    setMode(m: typeof mode) { mode = m; },
    /** Never answers names at or under `suffix`. */
    silence(suffix: string) { silent.add(suffix.toLowerCase()); },
    /** Answers SERVFAIL for names at or under `suffix`. */
    failUnder(suffix: string) { failing.add(suffix.toLowerCase()); },
    /** Removes every record (names become NXDOMAIN). */
    clear() { names.clear(); },
    /** Removes the records of one name and type (the name stays, so other types answer NODATA). */
    remove(name: string, type: Rr['type']) {
      const key = name.toLowerCase();
      names.set(key, (names.get(key) ?? []).filter((r) => r.type !== type));
    },
    mx(name: string, exchange: string, priority: number) { add(name, { type: 'MX', exchange, priority }); },
    /** Adds a TXT record; a string is split into 255-byte chunks, an array is served as given. */
    txt(name: string, value: string | string[]) { add(name, { type: 'TXT', chunks: Array.isArray(value) ? value : chunk(value) }); },
    srv(name: string, port: number, target: string, priority = 0, weight = 1) { add(name, { type: 'SRV', priority, weight, port, target }); },
    cname(name: string, target: string) { add(name, { type: 'CNAME', target }); },
    /** Adds an A record (a DNSBL listing is one). */
    a(name: string, address: string) { add(name, { type: 'A', address }); },
    /**
     * Publishes a record set as the API lists it: MX priority as text, TXT values chunked, SRV
     * values as `<weight> <port> <target>` with the priority apart.
     */
    publish(records: Array<{ type: string; name: string; value: string; priority: string }>) {
      for (const r of records) {
        if (r.type === 'MX') add(r.name, { type: 'MX', exchange: r.value, priority: Number(r.priority) });
        else if (r.type === 'SRV') {
          const [weight, port, target] = r.value.split(' ');
          add(r.name, { type: 'SRV', priority: Number(r.priority), weight: Number(weight), port: Number(port), target });
        } else if (r.type === 'CNAME') add(r.name, { type: 'CNAME', target: r.value });
        else add(r.name, { type: 'TXT', chunks: chunk(r.value) });
      }
    },
  };
}
export type Zone = Awaited<ReturnType<typeof startZone>>;

/** A UDP socket on 127.0.0.1 that reads queries and never answers (a resolver that times out). */
export async function startBlackHole(t: ExecutionContext): Promise<{ port: number; received: () => number }> {
  const socket: Socket = createSocket('udp4');
  let count = 0;
  socket.on('message', () => { count++; });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((r) => socket.close(() => r())));
  return { port: socket.address().port, received: () => count };
}
