// The public answer-equivalence vectors (docs/contract.md#answer-equivalence): at least 95% agreement, and the
// disagreements are exactly the ones documented in docs/answers.md ("Kept disagreements").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { answersEqual, explainEquality, extractAnswer } from '../../src/engine/answers/answers';
import { runEqual } from '../../src/cli/equal';
import { runExtract } from '../../src/cli/extract-command';
import { captureIO, loadVectors, type Vector } from './helpers';

/** `- vector N (...)` lines of the "Kept disagreements" section; N is the 1-based line number. */
function documentedDisagreements(): number[] {
  const doc = readFileSync(resolve(process.cwd(), 'docs/answers.md'), 'utf8');
  const section = doc.split(/^## /m).find((s) => s.startsWith('Kept disagreements'));
  assert.ok(section, 'docs/answers.md has a "Kept disagreements" section');
  return [...section.matchAll(/^- vector (\d+)\b/gm)].map((m) => Number(m[1])).sort((x, y) => x - y);
}

function judged(v: Vector): boolean {
  const b = v.b_is_response ? extractAnswer(v.b) : v.b;
  return b !== null && answersEqual(v.a, b);
}

const vectors = loadVectors();

test('vectors: >= 95% agree and the disagreements are exactly the documented ones', () => {
  assert.equal(vectors.length, 130);
  const wrong: number[] = [];
  vectors.forEach((v, i) => {
    if (judged(v) !== v.equal) wrong.push(i + 1);
  });
  const agreement = 1 - wrong.length / vectors.length;
  assert.ok(agreement >= 0.95, `agreement ${agreement}`);
  assert.deepEqual(wrong, documentedDisagreements());
});

test('vectors: the explanation agrees with answersEqual and is symmetric', () => {
  for (const v of vectors) {
    const b = v.b_is_response ? extractAnswer(v.b) : v.b;
    if (b === null) continue;
    const ab = explainEquality(v.a, b);
    const ba = explainEquality(b, v.a);
    assert.equal(ab.equal, answersEqual(v.a, b));
    assert.equal(ab.equal, ba.equal, `${v.a} | ${b}`);
    assert.deepEqual(ab.left, ba.right);
    assert.equal(typeof ab.reason, 'string');
  }
});

test('vectors through the CLI: extract on b, then equal --jsonl, agree with the library', async () => {
  const pairs: { a: string; b: string | null }[] = [];
  for (const v of vectors) {
    if (v.b_is_response) {
      const c = captureIO(v.b);
      assert.equal(await runExtract(['-'], c.io), 0);
      pairs.push({ a: v.a, b: JSON.parse(c.out()) as string | null });
    } else pairs.push({ a: v.a, b: v.b });
  }
  const c = captureIO(pairs.map((p) => JSON.stringify(p)).join('\n') + '\n');
  assert.equal(await runEqual(['--jsonl', '-'], c.io), 0);
  const outs = c.out().trim().split('\n').map((l) => (JSON.parse(l) as { equal: boolean }).equal);
  assert.deepEqual(outs, vectors.map(judged));
});
