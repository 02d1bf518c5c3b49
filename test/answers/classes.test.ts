import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formClasses, answersEqual } from '../../src/engine/answers/answers';

test('formClasses: nulls are -1, classes ordered by first member, members ascending', () => {
  const r = formClasses(['5', null, '\\frac{1}{2}', '5.0', '0.5', '', null, '']);
  assert.deepEqual(Array.from(r.classOf), [0, -1, 1, 0, 1, 2, -1, 2]);
  assert.deepEqual(r.classes, [
    { answer: '5', members: [0, 3] },
    { answer: '\\frac{1}{2}', members: [2, 4] },
    { answer: '', members: [5, 7] },
  ]);
});

test('formClasses never merges two different integers', () => {
  const xs = ['100000', '100001', '99999', '100000.0', '1e5'];
  const r = formClasses(xs);
  assert.equal(r.classes.length, 3);
  assert.notEqual(r.classOf[0], r.classOf[1]);
  assert.equal(answersEqual('100000', '100001'), false);
});

test('empty string is its own class', () => {
  const r = formClasses(['', '0', '']);
  assert.deepEqual(Array.from(r.classOf), [0, 1, 0]);
});
