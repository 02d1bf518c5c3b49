import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractAnswer } from '../../src/engine/answers/answers';

test('last balanced box wins; nested braces counted', () => {
  assert.equal(extractAnswer('$=2+\\frac{5}{3}+1=\\boxed{\\frac{14}{3}}$'), '\\frac{14}{3}');
  assert.equal(extractAnswer('first \\boxed{5}, then \\boxed{6}'), '6');
  assert.equal(extractAnswer('\\boxed{\\{1,2\\}}'), '\\{1,2\\}');
});

test('unclosed last box is a truncated generation: null, no fallback to earlier boxes', () => {
  assert.equal(extractAnswer('\\boxed{5} hmm, actually \\boxed{\\frac{1}{2'), null);
  assert.equal(extractAnswer('the answer is \\boxed{12'), null);
});

test('empty box is the empty answer', () => {
  assert.equal(extractAnswer('\\boxed{}'), '');
  assert.equal(extractAnswer('so \\boxed{ }'), '');
});

test('boxed without braces and fbox', () => {
  assert.equal(extractAnswer('$\\boxed 5$'), '5');
  assert.equal(extractAnswer('\\boxed 42.'), '42.');
  assert.equal(extractAnswer('$\\fbox{7}$'), '7');
  assert.equal(extractAnswer('$\\boxed\\pi$'), '\\pi');
  assert.equal(extractAnswer('so \\boxed5.'), '5');
  assert.equal(extractAnswer('cut off at \\boxed'), null);
});

test('final answer / answer: patterns strip markdown, dollars and the period', () => {
  assert.equal(extractAnswer('So answer is consistent.\n\nFinal Answer: **73**'), '73');
  assert.equal(extractAnswer('Final Answer: The largest $n$ is 34.'), '34');
  assert.equal(extractAnswer('The final answer is $\\frac{1}{2}$.'), '\\frac{1}{2}');
  assert.equal(extractAnswer('answer: 17'), '17');
});

test('last number fallback, mixed numbers, option off', () => {
  assert.equal(extractAnswer('Therefore, there are 12 distinct sequences.'), '12');
  assert.equal(extractAnswer('The answer is 4 4/9.'), '4 4/9');
  assert.equal(extractAnswer('we get 4 4/9 in total'), '4\\frac{4}{9}');
  assert.equal(extractAnswer('The probability is $\\frac{1}{2}$ here'), '\\frac{1}{2}');
  assert.equal(extractAnswer('there are 12 ways', { lastNumber: false }), null);
  assert.equal(extractAnswer('I could not finish the problem.'), null);
});

test('multiple choice: explicit Answer or letter forms; never a stray capital', () => {
  assert.equal(extractAnswer('so **Answer: D**'), 'D');
  assert.equal(extractAnswer('Answer: (B)'), 'B');
  assert.equal(extractAnswer('\\boxed{C}'), 'C');
  assert.equal(extractAnswer('**B**'), 'B');
  assert.equal(extractAnswer('(B)'), 'B');
  assert.equal(extractAnswer('B.'), 'B');
  assert.equal(extractAnswer('Consider A and B, the two cases; neither works.'), null);
});
