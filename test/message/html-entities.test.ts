import test from 'ava';
import { decodeHtmlEntities } from '../../src/message/html-entities.js';
import { htmlToText } from '../../src/message/body-text.js';
import { plainText } from '../../src/message/text.js';

test('named and numeric references are decoded; a reference to no character stays as written', (t) => {
  t.is(decodeHtmlEntities('a&amp;b &LT;&gt; &quot;&apos;&nbsp;x'), `a&b <> "' x`);
  t.is(decodeHtmlEntities('&#233;&#x263A;&#X1F600;'), 'é☺😀');
  t.is(decodeHtmlEntities('&#0; &#xD800; &#x110000; &bogus; &amp'), '&#0; &#xD800; &#x110000; &bogus; &amp');
});

test('the stored text and the search text of an HTML body decode references the same way', (t) => {
  const html = '<p>caf&eacute; &amp; cr&#232;me &#xDFFF;</p>';
  t.is(htmlToText(html), 'caf&eacute; & crème &#xDFFF;');
  t.is(plainText(null, html).trim(), 'caf&eacute; & crème &#xDFFF;');
});
