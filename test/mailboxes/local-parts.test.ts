import test from 'ava';
import { foldAscii, localPartCandidates, nameWords } from '../../src/mailboxes/local-parts.js';

const lists: Array<[string, number, string[] | null]> = [
  ['Ann Lee Smith', 11, ['ann.smith', 'annsmith', 'a.smith', 'ann', 'asmith', 'ann_smith', 'smith.ann', 'ann.s', 'ann.smith1', 'ann.smith2', 'ann.smith3']],
  ['Ann Smith', 3, ['ann.smith', 'annsmith', 'a.smith']],
  ['Zoë Ångström-Berg', 8, ['zoe.angstrom-berg', 'zoeangstrom-berg', 'z.angstrom-berg', 'zoe', 'zangstrom-berg', 'zoe_angstrom-berg', 'angstrom-berg.zoe', 'zoe.a']],
  ['Madonna', 4, ['madonna', 'madonna1', 'madonna2', 'madonna3']],
  ['  José   María  Núñez ', 2, ['jose.nunez', 'josenunez']],
  ['Jean-Luc Picard', 1, ['jean-luc.picard']],
  ['Søren Kierkegaard', 1, ['soren.kierkegaard']],
  ['Æsa Brødsgaard', 1, ['aesa.brodsgaard']],
  ['Łukasz Żółć', 1, ['lukasz.zolc']],
  ['Đorđe Balašević', 1, ['dorde.balasevic']],
  ['Günther Straße', 1, ['gunther.strasse']],
  ["Seán O'Brien", 2, ['sean.obrien', 'seanobrien']],
  ['Ann Ann', 4, ['ann.ann', 'annann', 'a.ann', 'ann']],
  ['J. R. R. Tolkien', 9, ['j.tolkien', 'jtolkien', 'j', 'j_tolkien', 'tolkien.j', 'j.t', 'j.tolkien1', 'j.tolkien2', 'j.tolkien3']],
  ['--- ***', 3, null],
  ['李小龙', 3, null],
];

for (const [name, count, expected] of lists) {
  test(`local parts of ${JSON.stringify(name)}`, (t) => {
    const got = localPartCandidates(name, count);
    t.deepEqual(got, expected);
    if (got) {
      t.is(new Set(got).size, got.length);
      for (const l of got) t.regex(l, /^[a-z0-9]([a-z0-9._-]*[a-z0-9])?$/);
    }
  });
}

test('100 candidates are distinct, valid and at most 64 characters even for long names', (t) => {
  const got = localPartCandidates('Maximilianusferdinandusalexandrius Vandenberghevanderlindenhoven', 100)!;
  t.is(got.length, 100);
  t.is(new Set(got).size, 100);
  t.true(got.every((l) => l.length <= 64));
  t.is(got[99], 'maximilianusferdinandusalexa.vandenberghevanderlindenhove92');
});

test('ASCII folding', (t) => {
  t.is(foldAscii('Zoë Ångström ﬁn Œuvre ħ'), 'Zoe Angstrom fin OEuvre h');
  t.deepEqual(nameWords("Anne-Marie  d'Arc_Smith"), ['anne-marie', 'darc', 'smith']);
});
