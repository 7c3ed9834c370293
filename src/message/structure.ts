import addressparser from 'nodemailer/lib/addressparser';
import { countLines, field, parseParams, type MimePart } from './mime.js';
import { nstr, str } from './imap-string.js';

/*
 * ENVELOPE and BODY/BODYSTRUCTURE (RFC 9051 section 7.5.2) of a parsed message. Header values are
 * given as they stand in the message (encoded words included), as the RFC asks.
 */

type Address = { name?: string; address?: string; group?: Address[] };

/** An address list as `((name adl mailbox host) ...)`, groups in RFC 9051's start/end form; NIL when empty. */
function addresses(value: string | undefined): string {
  if (!value) return 'NIL';
  let list: Address[];
  try {
    list = addressparser(value) as Address[];
  } catch {
    return 'NIL';
  }
  // Source routes (`<@relay:user@host>`, obsolete but still written) are the ENVELOPE's adl.
  const routes = new Map<string, string>();
  for (const m of value.matchAll(/<\s*(@[^<>:]*):([^<>]*)>/g)) routes.set(m[2].trim().toLowerCase(), m[1].trim());
  const one = (a: Address): string => {
    const at = (a.address ?? '').lastIndexOf('@');
    const mailbox = at >= 0 ? a.address!.slice(0, at) : (a.address ?? '');
    const host = at >= 0 ? a.address!.slice(at + 1) : null;
    return `(${nstr(a.name || null)} ${nstr(routes.get((a.address ?? '').toLowerCase()) ?? null)} ${nstr(mailbox || null)} ${nstr(host)})`;
  };
  const out: string[] = [];
  for (const a of list) {
    if (a.group) {
      out.push(`(NIL NIL ${nstr(a.name ?? '')} NIL)`);
      // A comment inside a group (`group2: (foo) ;`) comes back as a nameless entry: no member.
      for (const g of a.group) if (g.address) out.push(one(g));
      out.push('(NIL NIL NIL NIL)');
    } else if (a.address || a.name) out.push(one(a));
  }
  return out.length ? `(${out.join('')})` : 'NIL';
}

/** The ENVELOPE of a message (its top part, or the message in a message/rfc822 part). */
export function envelope(m: MimePart): string {
  const f = (n: string) => field(m, n);
  const from = addresses(f('from'));
  const sender = f('sender') ? addresses(f('sender')) : from;
  const replyTo = f('reply-to') ? addresses(f('reply-to')) : from;
  return `(${nstr(f('date') ?? null)} ${nstr(f('subject') ?? null)} ${from} ${sender} ${replyTo} ${addresses(f('to'))} ${addresses(f('cc'))} ${addresses(f('bcc'))} ${nstr(f('in-reply-to') ?? null)} ${nstr(f('message-id') ?? null)})`;
}

const upper = (s: string) => str(s.toUpperCase());
const paramList = (params: Array<[string, string]>) => (params.length ? `(${params.map(([k, v]) => `${upper(k)} ${str(v)}`).join(' ')})` : 'NIL');

function disposition(p: MimePart): string {
  const d = field(p, 'content-disposition');
  if (!d) return 'NIL';
  const { value, params } = parseParams(d);
  return `(${upper(value)} ${paramList(params)})`;
}

const language = (p: MimePart) => { const l = field(p, 'content-language'); return l ? `(${l.split(',').map((x) => str(x.trim())).join(' ')})` : 'NIL'; };

/** BODYSTRUCTURE (`extended`) or BODY of a part. */
export function bodyStructure(raw: Buffer, p: MimePart, extended: boolean): string {
  if (p.children) {
    const kids = p.children.length ? p.children.map((c) => bodyStructure(raw, c, extended)).join('') : '("TEXT" "PLAIN" NIL NIL NIL "7BIT" 0 0)';
    const ext = extended ? ` ${paramList(p.params)} ${disposition(p)} ${language(p)} ${nstr(field(p, 'content-location') ?? null)}` : '';
    return `(${kids} ${upper(p.subtype)}${ext})`;
  }
  const size = p.bodyEnd - p.bodyStart;
  const cte = (field(p, 'content-transfer-encoding') ?? '7BIT').toUpperCase();
  let out = `(${upper(p.type)} ${upper(p.subtype)} ${paramList(p.params)} ${nstr(field(p, 'content-id') ?? null)} ${nstr(field(p, 'content-description') ?? null)} ${str(cte)} ${size}`;
  if (p.message) out += ` ${envelope(p.message)} ${bodyStructure(raw, p.message, extended)} ${countLines(raw, p.bodyStart, p.bodyEnd)}`;
  else if (p.type === 'text') out += ` ${countLines(raw, p.bodyStart, p.bodyEnd)}`;
  if (extended) out += ` ${nstr(field(p, 'content-md5') ?? null)} ${disposition(p)} ${language(p)} ${nstr(field(p, 'content-location') ?? null)}`;
  return out + ')';
}
