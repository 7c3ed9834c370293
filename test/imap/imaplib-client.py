"""An independent IMAP client (Python's imaplib) run by imaplib.test.ts: prints one JSON object."""
import imaplib, json, ssl, sys

host, port, user, password, cafile = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
ctx = ssl.create_default_context(cafile=cafile)
ctx.check_hostname = False  # the self-signed certificate names the server's hostname, not 127.0.0.1
out = {}
m = imaplib.IMAP4_SSL(host, port, ssl_context=ctx, timeout=30)
out['login'] = m.login(user, password)[0]
typ, data = m.list()
out['list'] = [d.decode() for d in data]
typ, data = m.select('INBOX')
out['exists'] = int(data[0])
typ, data = m.search(None, 'SUBJECT', '"needle"')
out['search'] = data[0].decode().split()
typ, data = m.fetch('1', '(BODY.PEEK[] FLAGS)')
# imaplib splits the response at the literal: FLAGS may come before or after it
out['fetch_meta'] = data[0][0].decode() + ''.join(d.decode() for d in data[1:] if isinstance(d, bytes))
out['fetch_body'] = data[0][1].decode('utf-8')
typ, data = m.store('1', '+FLAGS', '(\\Seen \\Flagged)')
out['store'] = [d.decode() for d in data]
typ, data = m.fetch('1', '(FLAGS)')
out['flags_after'] = data[0].decode()
out['logout'] = m.logout()[0]
print(json.dumps(out))
