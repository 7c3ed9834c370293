// Messages the test mail system "sends" when a result is executed: redirects as they are, rejects as a
// refusal to the envelope sender, vacation replies with the RFC 3834 rules of DECISIONS.md section 19.
import type { SieveAction } from '../../../src/sieve/api.js';
import type { Runtime } from '../../../src/sieve/runtime.js';
import { addressesOf, normalizeEnvelopePath } from '../../../src/sieve/address.js';

export interface Sent { from: string | null; to: string; raw: Buffer }

function vacationAllowed(rt: Runtime, sender: string | null, action: Extract<SieveAction, { type: 'vacation' }>, config: Map<string, string>, origTo: string | null): boolean {
  if (!sender) return false;
  const user = config.get('sieve_user_email');
  const useOriginal = config.get('sieve_vacation_use_original_recipient') === 'yes';
  const mine = new Set([rt.input.envelope.to, useOriginal ? origTo ?? '' : '', user ?? '', ...action.addresses].filter((a) => a).map((a) => a.toLowerCase()));
  if (mine.has(sender.toLowerCase())) return false;
  const suppress = (rt.message.values('x-auto-response-suppress')[0] ?? '').toLowerCase().split(/[\s,]+/);
  if (suppress.includes('all') || suppress.includes('oof')) return false;
  const local = sender.split('@')[0].toLowerCase();
  if (local === 'mailer-daemon' || local.startsWith('owner-') || local.endsWith('-request')) return false;
  const m = rt.message;
  const auto = m.values('auto-submitted')[0];
  if (auto && auto.toLowerCase().split(';')[0].trim() !== 'no') return false;
  if (m.has('list-id') || m.has('list-unsubscribe')) return false;
  const precedence = (m.values('precedence')[0] ?? '').toLowerCase();
  if (['bulk', 'list', 'junk'].includes(precedence)) return false;
  if (config.get('sieve_vacation_dont_check_recipient') === 'yes') return true;
  const listed = ['to', 'cc', 'bcc', 'resent-to', 'resent-cc'].flatMap((h) => m.values(h).flatMap(addressesOf)).map((a) => a.toLowerCase());
  return listed.some((a) => mine.has(a));
}

/** The To of a reply: the original header whose address is the envelope sender, else the bare sender. */
function replyTo(rt: Runtime, sender: string, config: Map<string, string>): string {
  if (config.get('sieve_vacation_to_header_ignore_envelope') === 'yes') {
    const header = rt.message.rawValues('sender')[0] ?? rt.message.rawValues('from')[0];
    if (header) return header.trim();
  }
  for (const name of ['from', 'sender', 'reply-to']) {
    for (const raw of rt.message.rawValues(name)) {
      if (addressesOf(raw).some((a) => a.toLowerCase() === sender.toLowerCase())) return raw.trim();
    }
  }
  return `<${sender}>`;
}

function defaultSubject(subject: string, config: Map<string, string>): string {
  const template = config.get('sieve_vacation_default_subject_template');
  const max = Number(config.get('sieve_vacation_max_subject_codepoints') || 256);
  const points = Array.from(subject);
  const cut = points.length > max ? points.slice(0, max).join('') + '\u2026' : subject;
  if (template) return template.replace(/%\$|%\{subject\}/g, cut);
  const fixed = config.get('sieve_vacation_default_subject');
  if (fixed) return fixed;
  return `Auto: ${cut}`;
}

export function outgoingMessages(rt: Runtime, actions: SieveAction[], config: Map<string, string>, origTo: string | null = null): Sent[] {
  const out: Sent[] = [];
  const sender = rt.input.envelope.from === null ? null : normalizeEnvelopePath(rt.input.envelope.from) || null;
  const subject = rt.message.values('subject')[0] ?? '';
  const messageId = rt.message.values('message-id')[0];
  for (const a of actions) {
    if (a.type === 'redirect') out.push({ from: rt.input.envelope.from, to: a.address, raw: rt.message.raw });
    if (a.type === 'reject' && sender) {
      const raw = `From: Postmaster <postmaster@example.net>\r\nTo: <${sender}>\r\nSubject: Automatically rejected mail\r\n` +
        `Auto-Submitted: auto-replied (rejected)\r\nMIME-Version: 1.0\r\n\r\n${a.reason}\r\n`;
      out.push({ from: null, to: sender, raw: Buffer.from(raw) });
    }
    if (a.type === 'vacation' && sender && vacationAllowed(rt, sender, a, config, origTo)) {
      const from = a.from ?? config.get('sieve_user_email') ?? rt.input.envelope.to;
      const subj = a.subject ?? defaultSubject(subject, config);
      const earlier = rt.message.values('references')[0]?.replace(/\s+/g, ' ').trim();
      const refs = messageId ? `In-Reply-To: ${messageId}\r\nReferences: ${earlier ? earlier + ' ' : ''}${messageId}\r\n` : '';
      const raw = `From: ${from}\r\nTo: ${replyTo(rt, sender, config)}\r\nSubject: ${subj}\r\n${refs}Auto-Submitted: auto-replied (vacation)\r\nPrecedence: bulk\r\n` +
        (a.mime ? `${a.reason}` : `MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${a.reason}\r\n`);
      out.push({ from: null, to: sender, raw: Buffer.from(raw) });
    }
  }
  return out;
}
