import test from 'ava';
import { createSrs, isSrsLocalPart } from '../../src/message/srs.js';

// Published vectors: postsrsd's own test suite (secret "tops3cr3t", alias domain example.com, the
// clock at 2020-01-01 00:01 UTC). Matching them shows the format and hash are the libsrs2 ones.
const postsrsd = createSrs(Buffer.from('tops3cr3t'));
const newYear2020 = new Date('2020-01-01T00:01:00Z');
const DAY = 86_400_000;

test('forward matches postsrsd for a plain sender', (t) => {
  t.is(postsrsd.forward('test@otherdomain.com', 'example.com', newYear2020), 'SRS0=vmyz=2W=otherdomain.com=test@example.com');
});

test('forward of an SRS1 sender keeps its first forwarder and rehashes, as postsrsd does', (t) => {
  t.is(
    postsrsd.forward('SRS1=X=thirddomain.com==opaque+string@otherdomain.com', 'example.com', newYear2020),
    'SRS1=JIBX=thirddomain.com==opaque+string@example.com',
  );
});

test('reverse matches postsrsd: SRS0, SRS1, munged case, bad hash, stale and future stamps', (t) => {
  t.deepEqual(postsrsd.reverse('SRS0=XjO9=2V=otherdomain.com=test@example.com', newYear2020), { ok: true, address: 'test@otherdomain.com' });
  t.deepEqual(postsrsd.reverse('SRS1=JIBX=thirddomain.com==opaque+string@example.com', newYear2020), { ok: true, address: 'SRS0=opaque+string@thirddomain.com' });
  t.deepEqual(postsrsd.reverse('srs0=xjo9=2v=otherdomain.com=test@example.com', newYear2020), { ok: true, address: 'test@otherdomain.com' });
  t.deepEqual(postsrsd.reverse('SRS0=XJO9=2V=OTHERDOMAIN.COM=TEST@EXAMPLE.COM', newYear2020), { ok: true, address: 'TEST@OTHERDOMAIN.COM' });
  t.deepEqual(postsrsd.reverse('SRS0=FAKE=2V=otherdomain.com=test@example.com', newYear2020), { ok: false, reason: 'SRS hash does not match' });
  t.deepEqual(postsrsd.reverse('SRS0=te87=T7=otherdomain.com=test@example.com', newYear2020), { ok: false, reason: 'SRS address expired' });
  t.deepEqual(postsrsd.reverse('SRS0=VcIb=7N=otherdomain.com=test@example.com', newYear2020), { ok: false, reason: 'SRS address expired' });
});

test('reverse: not SRS is null, broken SRS is ok:false', (t) => {
  t.is(postsrsd.reverse('test@example.com', newYear2020), null);
  t.is(postsrsd.reverse('srs2=x=y=z=w@example.com', newYear2020), null);
  for (const bad of ['SRS0=@example.com', 'SRS0=XjO9@example.com', 'SRS0=XjO9=2V@example.com', 'SRS0=XjO9=2V=otherdomain.com@example.com', 'SRS0=XjO9=!!=otherdomain.com=test@example.com', 'SRS1=abcd@example.com', 'SRS1=abcd=host.example@example.com']) {
    const r = postsrsd.reverse(bad, newYear2020);
    t.truthy(r && !r.ok, bad);
  }
});

test('null sender stays null; a sender without a domain is left alone', (t) => {
  const srs = createSrs(Buffer.from('secret'));
  t.is(srs.forward('', 'alias.test', new Date()), '');
  t.is(srs.forward('postmaster', 'alias.test', new Date()), 'postmaster');
});

test('round trip keeps the original local part exactly, = signs included', (t) => {
  const srs = createSrs(Buffer.from('another secret'));
  const now = new Date('2026-11-26T04:00:00Z');
  for (const sender of ['alice@example.org', 'a=b=c@sub.example.org', 'Mixed.Case+tag@Example.ORG']) {
    const rewritten = srs.forward(sender, 'alias.test', now);
    t.regex(rewritten, /^SRS0=[A-Za-z0-9+/]{4}=[A-Z2-7]{2}=[^=]+=.+@alias\.test$/);
    t.deepEqual(srs.reverse(rewritten, now), { ok: true, address: sender });
  }
});

test('age: accepted up to 21 days, refused after; the stamp wraps every 1024 days', (t) => {
  const srs = createSrs(Buffer.from('k'));
  const sent = new Date('2026-11-26T12:00:00Z');
  const address = srs.forward('bob@example.org', 'alias.test', sent);
  t.true(srs.reverse(address, new Date(sent.getTime() + 21 * DAY))!.ok);
  t.deepEqual(srs.reverse(address, new Date(sent.getTime() + 22 * DAY)), { ok: false, reason: 'SRS address expired' });
  // 1024 days on, the stamp repeats: the same address reads as fresh again (the scheme's known window).
  t.true(srs.reverse(address, new Date(sent.getTime() + 1024 * DAY))!.ok);
  // Crossing the wrap: a stamp of day 1023 is 2 days old on day 1 of the next cycle.
  const day1023 = new Date(1023 * DAY + 3_600_000);
  const late = srs.forward('bob@example.org', 'alias.test', day1023);
  t.regex(late, /=77=/);
  t.true(srs.reverse(late, new Date(day1023.getTime() + 2 * DAY))!.ok);
});

test('a second forwarder turns our SRS0 into SRS1, and its bounce decodes back to our SRS0', (t) => {
  const first = createSrs(Buffer.from('first'));
  const second = createSrs(Buffer.from('second'));
  const now = new Date('2026-11-26T04:00:00Z');
  const srs0 = first.forward('carol@origin.example', 'first.example', now);
  const srs1 = second.forward(srs0, 'second.example', now);
  t.regex(srs1, /^SRS1=[A-Za-z0-9+/]{4}=first\.example==[A-Za-z0-9+/]{4}=[A-Z2-7]{2}=origin\.example=carol@second\.example$/);
  const back = second.reverse(srs1, now);
  t.deepEqual(back, { ok: true, address: srs0 });
  t.deepEqual(first.reverse(srs0, now), { ok: true, address: 'carol@origin.example' });
  // A third hop keeps naming the first forwarder.
  const third = createSrs(Buffer.from('third')).forward(srs1, 'third.example', now);
  t.regex(third, /^SRS1=[A-Za-z0-9+/]{4}=first\.example==.*@third\.example$/);
});

test('another secret does not verify', (t) => {
  const now = new Date('2026-11-26T04:00:00Z');
  const address = createSrs(Buffer.from('one')).forward('dave@example.org', 'alias.test', now);
  t.deepEqual(createSrs(Buffer.from('two')).reverse(address, now), { ok: false, reason: 'SRS hash does not match' });
});

test('isSrsLocalPart', (t) => {
  for (const yes of ['SRS0=a', 'srs1=b', 'SRS0+x', 'Srs0-y']) t.true(isSrsLocalPart(yes), yes);
  for (const no of ['SRS0', 'SRS2=a', 'xSRS0=a', 'alice', '']) t.false(isSrsLocalPart(no), no);
});
