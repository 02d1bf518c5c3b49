// Every computation on an answer is bounded (docs/answers.md, "Work and size bounds"): a parse
// over the node budget reads as text, a comparison over a bound is "not decided". A hang fails
// these tests through their timeouts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { explainEquality, answersEqual, clearAnswerCaches } from '../../src/engine/answers/answers';
import { parseLatex } from '../../src/engine/answers/latex';
import * as Q from '../../src/engine/answers/rational';
import { BudgetError, MAX_BITS } from '../../src/engine/answers/budget';
import { HOSTILE_ANSWERS } from './hostile-answers';

test('nested sums: the substituted copies count against the node budget', { timeout: 30_000 }, () => {
  assert.throws(() => parseLatex(HOSTILE_ANSWERS.nestedSum3), BudgetError);
  assert.throws(() => parseLatex(HOSTILE_ANSWERS.nestedSum2), BudgetError);
  // a single sum still reads
  assert.equal(answersEqual('\\sum_{k=1}^{10} k', '55'), true);
  assert.equal(answersEqual('\\sum_{i=1}^{3}\\sum_{j=1}^{3} (i+j)', '36'), true);
});

test('a product of 40 literal matrices is over the budget; 3 factors still evaluate', { timeout: 30_000 }, () => {
  clearAnswerCaches();
  const r = explainEquality(HOSTILE_ANSWERS.matrixProduct, '1');
  assert.equal(r.equal, false);
  assert.match(r.left.rewrites.join(' ') + r.right.rewrites.join(' '), /over the parse budget/);
  assert.equal(answersEqual('\\prod_{k=1}^{3} \\begin{pmatrix}1&1\\\\1&0\\end{pmatrix}', '\\begin{pmatrix}3&2\\\\2&1\\end{pmatrix}'), true);
});

test('big rational powers: operands are capped before a gcd; the answer is not decided', { timeout: 30_000 }, () => {
  assert.throws(() => Q.add(Q.rat(1n, 1n << BigInt(MAX_BITS - 4)), Q.rat(1n, 3n ** 10_000n)), BudgetError);
  for (const k of ['bigPowers', 'bigPowers2'] as const) {
    clearAnswerCaches();
    const r = explainEquality(HOSTILE_ANSWERS[k], '0');
    assert.equal(r.equal, false, k);
    assert.match(r.left.rewrites.join(' ') + r.right.rewrites.join(' ') + r.reason, /over the parse budget|not decided/, k);
  }
  // a large exact value within the cap is still exact
  assert.equal(answersEqual('1000!', '1000!'), true);
  assert.equal(answersEqual('2^{1000}+1', '1+2^{1000}'), true);
});

test('bidi controls do not survive normalisation: \\boxed{U+202E 12} is 12', () => {
  assert.equal(answersEqual('\u202e12', '12'), true);
  assert.equal(answersEqual('1\u20662\u2069', '12'), true);
});
