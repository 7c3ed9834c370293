import test from 'ava';
import { generatePassword, hashPassword, verifyPassword } from '../../src/mailboxes/passwords.js';

test('generated passwords: 24 characters of [A-Za-z0-9-_], all different', (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const p = generatePassword();
    t.regex(p, /^[A-Za-z0-9_-]{24}$/);
    seen.add(p);
  }
  t.is(seen.size, 200);
});

test('hash and verify', async (t) => {
  const chosen = await hashPassword('correct horse battery');
  const generated = await hashPassword('Ab-_0123456789abcdefghij', { generated: true });
  t.regex(chosen, /^\$scrypt\$ln=15,r=8,p=1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
  t.regex(generated, /^\$scrypt\$ln=12,r=8,p=1\$/);
  t.not(await hashPassword('correct horse battery'), chosen); // salted
  t.true(await verifyPassword('correct horse battery', chosen));
  t.false(await verifyPassword('correct horse batter', chosen));
  t.true(await verifyPassword('Ab-_0123456789abcdefghij', generated));
  t.false(await verifyPassword('Ab-_0123456789abcdefghiJ', generated));
  t.false(await verifyPassword('x', 'not a hash'));
  t.false(await verifyPassword('x', '$scrypt$ln=30,r=8,p=1$AAAA$AAAA'));
  // Unicode passwords compare in NFC, so the same text typed differently still matches.
  const accented = await hashPassword('Zo\u00eb-password');
  t.true(await verifyPassword('Zoe\u0308-password', accented));
});
