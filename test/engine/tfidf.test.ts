import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { cosineMatrix, tfidfRows, normaliseForNgrams } from '../../src/engine/features/tfidf';

// Fixtures made once by scripts/make-tfidf-fixtures.py with scikit-learn's TfidfVectorizer.
const fixture = JSON.parse(readFileSync('test/fixtures/tfidf-sklearn.json', 'utf8')) as {
  cases: { texts: string[]; cosine: number[][]; vocabulary: number }[];
};

test('TF-IDF cosines match scikit-learn on every fixture case', () => {
  for (const [k, c] of fixture.cases.entries()) {
    const got = cosineMatrix(c.texts);
    for (let i = 0; i < c.texts.length; i++) {
      for (let j = 0; j < c.texts.length; j++) {
        assert.ok(Math.abs(got[i][j] - c.cosine[i][j]) < 1e-12, `case ${k} (${JSON.stringify(c.texts.slice(0, 2))}) [${i},${j}]: ${got[i][j]} vs ${c.cosine[i][j]}`);
      }
    }
    assert.equal(tfidfRows(c.texts).vocabularySize, c.vocabulary, `vocabulary size of case ${k}`);
  }
});

test('only runs of two or more Python whitespace characters collapse', () => {
  assert.equal(normaliseForNgrams('a\tb'), 'a\tb');
  assert.equal(normaliseForNgrams('a\t\tb'), 'a b');
  assert.equal(normaliseForNgrams('a\u00a0\u00a0b'), 'a b');
  assert.equal(normaliseForNgrams('a\x1c\x1db'), 'a b'); // Python's \s, not JS's
  assert.equal(normaliseForNgrams('a\ufeff\ufeffb'), 'a\ufeff\ufeffb'); // JS's \s, not Python's
  assert.equal(normaliseForNgrams('AbC'), 'abc');
});

test('astral-plane characters count as one code point', () => {
  const rows = tfidfRows(['\u{1F600}\u{1F600}\u{1F600}\u{1F600}', 'abc']);
  assert.equal(rows.start[1] - rows.start[0], 1); // one 4-gram of four code points (8 UTF-16 units)
  assert.equal(rows.start[2] - rows.start[1], 0); // 3 code points: no 4-gram, zero row
});

test('rows are unit length or zero', () => {
  const rows = tfidfRows(['', 'abcdabcd', 'xyzw']);
  for (let d = 0; d < 3; d++) {
    let ss = 0;
    for (let k = rows.start[d]; k < rows.start[d + 1]; k++) ss += rows.values[k] ** 2;
    assert.ok(d === 0 ? ss === 0 : Math.abs(ss - 1) < 1e-12);
  }
});
