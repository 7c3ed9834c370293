import { ImapFlow, type ImapFlowOptions, type ListResponse } from 'imapflow';
import { ApiError } from '../errors.js';
import type { Progress } from './progress.js';
import type { FolderSink } from './sink.js';

/** What an IMAP import reads from: the task's payload with the password unsealed. */
export interface ImapSource {
  host: string;
  /** The checked address to connect to (host.ts). */
  address: string;
  port?: number;
  security: 'tls' | 'starttls' | 'none';
  tlsVerify: boolean;
  username: string;
  password: string;
  /** Source folder names to copy; all when absent. */
  folders?: string[];
}

/** Bodies are fetched this many (or this many bytes' worth) at a time. */
const FETCH_MESSAGES = 100;
const FETCH_BYTES = 8 * 1024 * 1024;

/** Special-use folders of the source and ours. */
const SPECIAL: Record<string, string> = { '\\Inbox': 'INBOX', '\\Sent': 'Sent', '\\Junk': 'Junk', '\\Trash': 'Trash', '\\Drafts': 'Drafts' };

/** Our name for a source folder: special-use ones map to ours, others keep their names (our separator is `/`). */
export function ourFolderName(f: Pick<ListResponse, 'path' | 'delimiter' | 'specialUse'>): string {
  if (f.path.toUpperCase() === 'INBOX') return 'INBOX';
  const special = f.specialUse ? SPECIAL[f.specialUse] : undefined;
  if (special) return special;
  return f.delimiter && f.delimiter !== '/' ? f.path.split(f.delimiter).join('/') : f.path;
}

/** The source's answer to a failed login or connection, for the task's error. */
function sourceError(err: unknown, host: string): ApiError {
  const e = err as { authenticationFailed?: boolean; responseText?: string; message?: string; code?: string };
  if (e.authenticationFailed) return new ApiError(422, `Login to ${host} failed: ${e.responseText || e.message || 'authentication failed'}`);
  return new ApiError(422, `IMAP source ${host}: ${e.responseText || e.message || e.code || 'connection failed'}`);
}

/**
 * Copies an IMAP account into the sink's folders (DECISIONS.md section 20): lists the folders
 * (Gmail's `\All`, which repeats every other folder, only when named), counts their messages,
 * then per folder reads every message's UID, flags, INTERNALDATE, size and Message-ID, skips
 * those already there without fetching their bytes, and fetches the rest in bounded batches.
 */
export async function importImap(src: ImapSource, o: {
  folder(name: string): Promise<FolderSink>; progress: Progress; signal: AbortSignal; onStage?(stage: string): void;
}): Promise<void> {
  const options: ImapFlowOptions & { doSTARTTLS?: boolean } = {
    host: src.address, servername: src.host, port: src.port ?? (src.security === 'tls' ? 993 : 143),
    secure: src.security === 'tls', doSTARTTLS: src.security === 'starttls' ? true : src.security === 'none' ? false : undefined,
    auth: { user: src.username, pass: src.password }, logger: false, disableAutoIdle: true,
    tls: { rejectUnauthorized: src.tlsVerify, servername: src.host },
    connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 5 * 60_000,
  };
  const client = new ImapFlow(options);
  client.on('error', () => undefined);
  // A stop closes the connection and ends the import at once, even in the middle of a connect
  // that would otherwise wait for its timeout.
  let stop = () => { client.close(); };
  const stopped = new Promise<never>((_, reject) => {
    stop = () => {
      reject(new Error('import stopped'));
      try { client.close(); } catch { /* not connected yet */ }
    };
  });
  stopped.catch(() => undefined);
  if (o.signal.aborted) stop();
  o.signal.addEventListener('abort', stop, { once: true });
  const work = async () => {
    try {
      await client.connect();
    } catch (err) {
      if (o.signal.aborted) throw err;
      throw sourceError(err, src.host);
    }
    const listed = (await client.list()).filter((f) => !f.flags.has('\\Noselect') && !f.flags.has('\\NonExistent'));
    const wanted = src.folders
      ? listed.filter((f) => src.folders!.includes(f.path))
      : listed.filter((f) => f.specialUse !== '\\All');
    if (src.folders) {
      const missing = src.folders.filter((n) => !listed.some((f) => f.path === n));
      if (missing.length) throw new ApiError(422, `No folder ${JSON.stringify(missing[0])} on ${src.host}`);
    }
    let total = 0;
    for (const f of wanted) total += ((await client.status(f.path, { messages: true })) || { messages: 0 }).messages ?? 0;
    o.progress.plan(wanted.length, total);

    for (const f of wanted) {
      const sink = await o.folder(ourFolderName(f));
      const lock = await client.getMailboxLock(f.path, { readOnly: true });
      try {
        const box = client.mailbox;
        if (!box || box.exists === 0) continue;
        const meta: Array<{ uid: number; flags: string[]; date: number; size: number }> = [];
        for await (const m of client.fetch('1:*', { uid: true, flags: true, internalDate: true, size: true, envelope: true })) {
          const date = m.internalDate instanceof Date ? m.internalDate.getTime() : Date.parse(String(m.internalDate ?? ''));
          const flags = [...(m.flags ?? [])].filter((x) => x !== '\\Recent');
          const size = m.size ?? 0;
          if (sink.has(m.envelope?.messageId, date, size)) { o.progress.seen(); o.progress.skipped(); continue; }
          meta.push({ uid: m.uid, flags, date: Number.isFinite(date) ? date : Date.now(), size });
        }
        const byUid = new Map(meta.map((m) => [m.uid, m]));
        for (let i = 0; i < meta.length;) {
          const uids: number[] = [];
          let bytes = 0;
          while (i < meta.length && uids.length < FETCH_MESSAGES && (uids.length === 0 || bytes + meta[i]!.size <= FETCH_BYTES)) {
            uids.push(meta[i]!.uid);
            bytes += meta[i]!.size;
            i++;
          }
          const fetched: Array<{ uid: number; source: Buffer }> = [];
          for await (const m of client.fetch(uids.join(','), { uid: true, source: true }, { uid: true })) {
            if (m.source) fetched.push({ uid: m.uid, source: m.source });
          }
          for (const m of fetched) {
            const at = byUid.get(m.uid)!;
            await sink.add(m.source, at.flags, at.date);
          }
          if (o.signal.aborted) return;
        }
        await sink.flush();
      } finally {
        lock.release();
      }
    }
  };
  const running = work();
  running.catch(() => undefined);
  try {
    await Promise.race([running, stopped]);
  } finally {
    o.signal.removeEventListener('abort', stop);
    // Stopped: a batch being written finishes (the socket is closed, so reading ends at once), but
    // a connect that hangs is not waited for.
    if (o.signal.aborted) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([running.then(() => undefined, () => undefined), new Promise<void>((r) => { timer = setTimeout(r, 3000); })]);
      clearTimeout(timer);
    }
    if (client.usable) await client.logout().catch(() => client.close()); else client.close();
  }
}
