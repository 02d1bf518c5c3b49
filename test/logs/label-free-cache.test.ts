// The run cache keeps the label-free operators' inputs (docs/contract.md#label-free-operators): a
// group read back from its record scores as the group prepared from its log, and a NaN or ∞ it
// held is still refused by name (JSON has neither: they travel as strings).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareGroup, scoreGroup, scoreToJson, type Group, type OperatorId } from '../../src/engine';
import { decodeFeatures, encodeRecord } from '../../src/logs/cache/record';
import type { GroupEntry } from '../../src/logs/entries';

const OPS: OperatorId[] = ['empo', 'selfcertainty', 'entropy', 'likelihood', 'novelty'];

function roundTrip(g: Group) {
  const p = prepareGroup(g, { reasoning: true, health: true });
  const buf = encodeRecord({ key: 'k', step: g.step, questionId: g.questionId } as unknown as Omit<GroupEntry, 'version'>, p);
  const aligned = new Uint8Array(new ArrayBuffer(buf.length));
  aligned.set(buf);
  return { fresh: p, cached: decodeFeatures(aligned).prepared };
}

test('a cached group scores the label-free operators as the fresh one', () => {
  const g: Group = {
    step: 3,
    questionId: 'q',
    rollouts: ['4', '4', '9', '4'].map((a, i) => ({
      response: `step ${'x '.repeat(i)}</think> so \\boxed{${a}}`,
      meanLogprob: -0.1 * (i + 1),
      selfCertainty: 5 + i,
      tokenEntropies: [0.5, 0.25 * i],
      confidenceApproximate: i === 2,
    })),
  };
  const { fresh, cached } = roundTrip(g);
  const a = scoreToJson(scoreGroup(fresh, { operators: OPS }));
  const b = scoreToJson(scoreGroup(cached, { operators: OPS }));
  assert.deepEqual(b.results, a.results);
  assert.equal(Object.keys(a.results as object).length, OPS.length);
});

test('a NaN or ∞ in the log is still refused after the cache', () => {
  const g: Group = {
    step: 0,
    questionId: 'q',
    rollouts: [0, 1, 2].map((i) => ({ response: `\\boxed{${i}}`, selfCertainty: i === 1 ? Number.NaN : 1, entropy: i === 2 ? Number.POSITIVE_INFINITY : 1 })),
  };
  const { cached } = roundTrip(g);
  const s = scoreGroup(cached, { operators: ['selfcertainty', 'entropy'] });
  assert.match(s.unavailable.selfcertainty ?? '', /roll-out 1's self_certainty is NaN: refused/);
  assert.match(s.unavailable.entropy ?? '', /roll-out 2's entropy is \+∞: refused/);
});
