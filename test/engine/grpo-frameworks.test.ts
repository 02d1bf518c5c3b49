import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADVANTAGE_FORMULAS, frameworkAdvantages, prepareGroup, scoreGroup, scoreToJson, type Group } from '../../src/engine';

test('framework advantage formulas: TRL eps 1e-4, verl eps 1e-6 and a group of one, NeMo RL leave-one-out', () => {
  const r = [1, 0, 0, 1];
  const std = Math.sqrt(1 / 3);
  assert.ok(Math.abs(frameworkAdvantages(r, ADVANTAGE_FORMULAS.trl)[0] - 0.5 / (std + 1e-4)) < 1e-15);
  assert.ok(Math.abs(frameworkAdvantages(r, ADVANTAGE_FORMULAS.verl)[0] - 0.5 / (std + 1e-6)) < 1e-15);
  // verl: a uid with one sample has mean 0 and std 1
  assert.ok(Math.abs(frameworkAdvantages([0.8], ADVANTAGE_FORMULAS.verl)[0] - 0.8 / (1 + 1e-6)) < 1e-15);
  // NeMo RL: for roll-out 0 the others are [0, 0, 1]: baseline 1/3, their population std √(1/3 − 1/9)
  const nemo = frameworkAdvantages(r, ADVANTAGE_FORMULAS['nemo-rl']);
  const s0 = Math.sqrt(1 / 3 - 1 / 9);
  assert.ok(Math.abs(nemo[0] - (1 - 1 / 3) / (s0 + 1e-6)) < 1e-12);
  assert.ok(Math.abs(nemo[1] - (0 - 2 / 3) / (s0 + 1e-6)) < 1e-12);
  // roll-out 0's others are equal: their std is 0 and its difference is not scaled
  assert.deepEqual(Array.from(frameworkAdvantages([1, 0, 0], ADVANTAGE_FORMULAS['nemo-rl'])), [1, -0.5 / (0.5 + 1e-6), -0.5 / (0.5 + 1e-6)]);
  assert.deepEqual(Array.from(frameworkAdvantages([3], ADVANTAGE_FORMULAS['nemo-rl'])), [0]);
});

test('score: a TRL group shows the logged advantages and follows TRL\'s formula unless advEps is given', () => {
  const g: Group = {
    step: 1,
    questionId: 'q',
    framework: 'trl',
    rollouts: ['7', '7', '8', '7'].map((a, i) => ({ response: `\\boxed{${a}}`, reward: a === '7' ? 1 : 0, advantage: [0.4999, 0.4999, -1.4997, 0.4999][i] })),
  };
  const s = scoreGroup(prepareGroup(g), { operators: ['majority'] });
  const j = scoreToJson(s) as { advantage_formula: unknown; logged_advantages: number[]; results: { majority: { advantages: number[] } } };
  assert.deepEqual(j.advantage_formula, { framework: 'trl', eps: 1e-4, std: 'unbiased' });
  assert.deepEqual(j.logged_advantages, [0.4999, 0.4999, -1.4997, 0.4999]);
  const std = Math.sqrt(0.75 / 3);
  assert.ok(Math.abs(j.results.majority.advantages[0] - 0.25 / (std + 1e-4)) < 1e-15);
  const explicit = scoreToJson(scoreGroup(prepareGroup(g), { operators: ['majority'], params: { advEps: 1e-6 } })) as Record<string, unknown>;
  assert.equal(explicit.advantage_formula, undefined);
  const plain = scoreToJson(scoreGroup(prepareGroup({ ...g, framework: undefined, rollouts: g.rollouts.map(({ advantage: _a, ...r }) => r) }), { operators: ['majority'] })) as Record<string, unknown>;
  assert.equal(plain.advantage_formula, undefined);
  assert.equal(plain.logged_advantages, undefined);
});

test('the readers name the trainer and keep TRL\'s logged advantages, through readRun and RunIndex', async () => {
  const { collect } = await import('../logs/helpers.js');
  const { RunIndex } = await import('../../src/logs/log-layer.js');
  const FX = 'test/fixtures/logs/writers';
  const trl = await collect(`${FX}/trl-1x-pandas3`);
  assert.ok(trl.groups.length > 0 && trl.groups.every((g) => g.framework === 'trl'));
  assert.ok(trl.groups.every((g) => g.rollouts.every((r) => typeof r.advantage === 'number')));
  const s = scoreToJson(scoreGroup(prepareGroup(trl.groups[0]), { operators: ['majority'] })) as { logged_advantages: number[]; advantage_formula: { framework: string } };
  assert.deepEqual(s.logged_advantages, trl.groups[0].rollouts.map((r) => r.advantage));
  assert.equal(s.advantage_formula.framework, 'trl');
  for (const [dir, fw] of [['verl-uid', 'verl'], ['nemo-rl', 'nemo-rl'], ['wandb-verl', 'verl']] as const) {
    const { groups } = await collect(`${FX}/${dir}`);
    assert.ok(groups.length > 0 && groups.every((g) => g.framework === fw), dir);
  }
  const idx = await RunIndex.open(`${FX}/trl-1x-pandas3`, { follow: false, onNotice: () => undefined });
  try {
    const g = await idx.loadGroup(idx.groups()[0].key);
    assert.equal(g.framework, 'trl');
    assert.deepEqual(g.rollouts.map((r) => r.advantage), trl.groups[0].rollouts.map((r) => r.advantage));
  } finally {
    idx.close();
  }
});
