/**
 * A fast loop for tokenizer and combiner changes (issue 43): the same corpus and folds as
 * scripts/bench/spam.ts, trained and classified in memory with the product's `features` and
 * `combine`, no database, no bogofilter. Not the claimed figures (those are spam.ts's): a
 * sifting tool. Usage: node --import tsx scripts/bench/spam-quick.ts [--folds=10] [--cutoff=0.99,0.9]
 * (SHOW=1 lists hard ham above 0.5 and spam missed at the first cutoff; the parsed corpus is cached in /tmp)
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { combine, type Counts } from '../../src/spam/chi2.js';
import { SPAM_CUTOFF } from '../../src/spam/classify.js';
import { classifyIds, featureIds } from '../../src/spam/tokens.js';
import { loadCorpus, type CorpusMessage, type Group } from './spam-corpus.js';

const { values } = parseArgs({ options: { folds: { type: 'string' }, cutoff: { type: 'string' } } });
const FOLDS = Number(values.folds ?? 10);
const cutoffs = values.cutoff ? values.cutoff.split(',').map(Number) : [SPAM_CUTOFF];
const cache = `/tmp/spam-corpus-${FOLDS}.json`;
const corpus: CorpusMessage[] = existsSync(cache) ? JSON.parse(readFileSync(cache, 'utf8')) : await loadCorpus(FOLDS);
if (!existsSync(cache)) writeFileSync(cache, JSON.stringify(corpus));
const ids = corpus.map((m) => featureIds(m));
const classified = corpus.map((m) => classifyIds(m));
const tally = new Map<number, Record<Group, { n: number; junk: number }>>();
for (const c of cutoffs) tally.set(c, { 'easy-ham': { n: 0, junk: 0 }, 'hard-ham': { n: 0, junk: 0 }, spam: { n: 0, junk: 0 } });
const misfiled: string[] = [];
for (let f = 0; f < FOLDS; f++) {
  const model = new Map<number, Counts>();
  let spam = 0;
  let ham = 0;
  corpus.forEach((m, i) => {
    if (m.fold === f) return;
    const isSpam = m.group === 'spam';
    if (isSpam) spam++; else ham++;
    for (const t of ids[i]) { const c = model.get(t) ?? { spam: 0, ham: 0 }; if (isSpam) c.spam++; else c.ham++; model.set(t, c); }
  });
  corpus.forEach((m, i) => {
    if (m.fold !== f) return;
    const list: Counts[] = [];
    for (const t of classified[i]) { const c = model.get(t); if (c) list.push(c); }
    const { probability } = combine(list, spam, ham);
    for (const c of cutoffs) {
      const t = tally.get(c)![m.group];
      t.n++;
      if (probability >= c) t.junk++;
    }
    if (m.group === 'hard-ham' && probability >= 0.5) misfiled.push(`HAM ${probability.toFixed(4)} ${m.subject}`);
    if (m.group === 'spam' && probability < cutoffs[0]) misfiled.push(`SPAM ${probability.toFixed(4)} ${list.length} ${m.subject.slice(0, 50)} | ${(m.bodyText ?? '').length} ${(m.bodyHtml ?? '').length}`);
  });
}
for (const [c, t] of tally) console.log(c, JSON.stringify(Object.fromEntries(Object.entries(t).map(([g, x]) => [g, `${x.junk}/${x.n} ${(100 * x.junk / x.n).toFixed(2)}%`]))));
if (process.env.SHOW) console.log(misfiled.join('\n'));
