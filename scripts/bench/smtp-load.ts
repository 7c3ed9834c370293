/**
 * The load generator of smtp.ts: the messages it sends, its senders (smtp-client.ts's lean one or
 * nodemailer's SMTPConnection), a timed load over one or several servers' SMTP ports, and the
 * per-process readings (RSS, CPU per message) it reports.
 */
import { readFileSync } from 'node:fs';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { processCpuMs } from './email-bench-server.js';
import { LeanSmtpClient } from './smtp-client.js';

export const DOMAIN = 'bench.test';
export const RCPT = `inbox@${DOMAIN}`;

/** A process's resident set in MB (0 once it is gone). */
export const rssMb = (pid: number) => {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    return kb / 1024;
  } catch {
    return 0;
  }
};

function body5k(): string {
  const line = 'The quick brown fox jumps over the lazy dog while the mail server keeps up. ';
  return Array.from({ length: 66 }, () => line).join('\r\n');
}

/** Whole messages (CRLF) that plain messages are made of instead of body5k (`useMessages`). */
let corpus: string[] | null = null;
/**
 * The fields of a corpus message that the benchmark sets itself: it waits for its subjects among the
 * newest listed (so no Date from 2002: the arrival dates the message), and Message-IDs must differ.
 */
const OWN_FIELDS = /^(subject|message-id|to|date):[^\r]*\r\n([ \t][^\r]*\r\n)*/gim;

/** Plain messages from now on are these messages in turn (their header fields kept but Subject, Message-ID, To and Date), not the repeated 5 KB line. */
export function useMessages(list: string[]): void {
  corpus = list.length > 0 ? list : null;
}

export function message(n: number, tag: string, attachment: string | null): string {
  if (corpus && !attachment) {
    const raw = corpus[n % corpus.length];
    const end = Math.max(raw.indexOf('\r\n\r\n'), 0);
    const header = raw.slice(0, end + 2).replace(OWN_FIELDS, '');
    return `Subject: ${tag} ${n}\r\nMessage-ID: <${tag}-${n}@client.example>\r\nTo: ${RCPT}\r\n${header}${raw.slice(end + 2)}`;
  }
  const head = `From: Bench Sender <sender@client.example>\r\nTo: ${RCPT}\r\nSubject: ${tag} ${n}\r\nMessage-ID: <${tag}-${n}@client.example>\r\nMIME-Version: 1.0\r\n`;
  if (!attachment) return `${head}Content-Type: text/plain; charset=utf-8\r\n\r\n${body5k()}\r\n`;
  return `${head}Content-Type: multipart/mixed; boundary=bb\r\n\r\n--bb\r\nContent-Type: text/plain\r\n\r\n${body5k()}\r\n--bb\r\nContent-Type: application/pdf; name=report.pdf\r\nContent-Disposition: attachment; filename=report.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n${attachment}\r\n--bb--\r\n`;
}

/** The 74 KB attachment of phase 2, base64 in 76-character lines. */
export const attachment74k = () =>
  Buffer.from(Array.from({ length: 74 * 1024 }, (_, i) => (i * 7 + 0x25) & 0xff)).toString('base64').replace(/.{76}/g, '$&\r\n');

export async function client(port: number): Promise<SMTPConnection> {
  const c = new SMTPConnection({ host: '127.0.0.1', port, ignoreTLS: true, name: 'client.example', socketTimeout: 60_000 });
  c.on('error', () => undefined);
  await new Promise<void>((res, rej) => c.connect((err) => (err ? rej(err) : res())));
  return c;
}

export const send = (c: SMTPConnection, raw: string | Buffer) => new Promise<void>((res, rej) => {
  c.send({ from: 'sender@client.example', to: [RCPT] }, raw, (err) => (err ? rej(err) : res()));
});

/** A sender of the load phases: one session, messages one after the other. */
interface Sender {
  send(raw: string): Promise<void>;
  quit(): void;
}

export type ClientKind = 'lean' | 'nodemailer';

async function sender(port: number, kind: ClientKind): Promise<Sender> {
  if (kind === 'lean') {
    const c = await LeanSmtpClient.open(port, 'client.example');
    return { send: (raw) => c.send('sender@client.example', RCPT, Buffer.from(raw, 'latin1')), quit: () => c.quit() };
  }
  const c = await client(port);
  return { send: (raw) => send(c, raw), quit: () => c.quit() };
}

/** What a load phase is given. */
export interface LoadOptions {
  /** The servers' SMTP ports: connection i goes to ports[i % ports.length] (several nodes share the senders). */
  ports: number[];
  connections: number;
  client: ClientKind;
  seconds: number;
  /** Subject prefix, so a phase's last message can be found in the listing. */
  tag: string;
  attachment: string | null;
  /** Offered msgs/s over all connections (0: each sends back to back). */
  rate?: number;
}

/** CONNECTIONS senders for `seconds`; returns counts and latencies. */
export async function load(o: LoadOptions) {
  const rate = o.rate ?? 0;
  const latencies: number[] = [];
  /** Acknowledgements per second of the phase: shows where in a burst the rate changes (the in-flow bound, storage no longer yielding). */
  const bySecond: number[] = [];
  let n = 0;
  let errors = 0;
  const end = performance.now() + o.seconds * 1000;
  const started = performance.now();
  let lastAck = started;
  let lastIndex = -1;
  await Promise.all(Array.from({ length: o.connections }, async (_, k) => {
    const c = await sender(o.ports[k % o.ports.length], o.client);
    while (performance.now() < end) {
      const i = n++;
      if (rate > 0) {
        const due = started + (i * 1000) / rate;
        if (due >= end) break;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      const t0 = performance.now();
      try {
        await c.send(message(i, o.tag, o.attachment));
        const t1 = performance.now();
        latencies.push(t1 - t0);
        const second = Math.floor((t1 - started) / 1000);
        bySecond[second] = (bySecond[second] ?? 0) + 1;
        if (t1 >= lastAck) { lastAck = t1; lastIndex = i; }
      } catch {
        errors++;
      }
    }
    c.quit();
  }));
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] * 10) / 10;
  const elapsed = (lastAck - started) / 1000;
  return { acked: latencies.length, errors, elapsed, rate: Math.round(latencies.length / elapsed), p50: pct(0.5), p99: pct(0.99), started, lastAck, lastIndex, bySecond: Array.from(bySecond, (v) => v ?? 0) };
}

/** CPU milliseconds used so far by the servers (summed over the nodes) and by the database cluster, when there is one. */
export interface CpuReading {
  total: number;
  main: number;
  database: number | null;
}

/** Reads the servers' CPU and the database cluster's (null without /proc). */
export function cpuOf(pids: number[], databaseCpuMs: (() => number | null) | null): CpuReading | null {
  const readings = pids.map(processCpuMs);
  if (readings.some((r) => r === null)) return null;
  return {
    total: readings.reduce((s, r) => s + r!.total, 0), main: readings.reduce((s, r) => s + r!.main, 0),
    database: databaseCpuMs ? databaseCpuMs() : null,
  };
}

/** CPU per acknowledged message over a phase: the servers' threads, their main threads alone, and PostgreSQL's processes. */
export function cpuPerMessage(before: CpuReading | null, after: CpuReading | null, acked: number): { server_cpu_us_per_msg?: number; main_thread_cpu_us_per_msg?: number; postgres_cpu_us_per_msg?: number } {
  if (!before || !after) return {};
  const per = (ms: number) => Math.round((ms * 1000) / Math.max(acked, 1));
  return {
    server_cpu_us_per_msg: per(after.total - before.total),
    main_thread_cpu_us_per_msg: per(after.main - before.main),
    ...(before.database !== null && after.database !== null ? { postgres_cpu_us_per_msg: per(after.database - before.database) } : {}),
  };
}
