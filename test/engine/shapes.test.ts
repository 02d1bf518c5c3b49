// Registry and parameter table: what the CLI, the settings and the sliders are built from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_PARAMS, OPERATORS, PARAM_SPECS, needsReasoning, parseOperatorList, resolveParams } from '../../src/engine';

test('the registry lists the operators of docs/contract.md#operators and #label-free-operators in order, each with its parameters and needs', () => {
  assert.deepEqual(OPERATORS.map((o) => o.id), ['majority', 'cisc', 'ec', 'core', 't3rl', 'msttrl', 'empo', 'selfcertainty', 'entropy', 'likelihood', 'novelty']);
  for (const o of OPERATORS) for (const p of o.params) assert.ok(PARAM_SPECS.some((s) => s.id === p), `${o.id}: ${p}`);
  assert.equal(needsReasoning(['majority', 't3rl']), false);
  assert.equal(needsReasoning(['empo', 'selfcertainty', 'entropy', 'likelihood']), false);
  assert.equal(needsReasoning(['novelty']), true);
  assert.equal(needsReasoning(['majority', 'core']), true);
  assert.equal(needsReasoning(), true);
});

test('defaults are the papers\' single setting', () => {
  assert.equal(DEFAULT_PARAMS.kappa, 0.1);
  assert.equal(DEFAULT_PARAMS.tau, 0.25);
  assert.equal(DEFAULT_PARAMS.alpha, 0.1);
  assert.equal(DEFAULT_PARAMS.shift, null); // C = α
  assert.equal(DEFAULT_PARAMS.eps, 1e-6);
  assert.equal(DEFAULT_PARAMS.tmax, 200);
  assert.equal(DEFAULT_PARAMS.omega, 5);
  assert.equal(DEFAULT_PARAMS.lambda, 0.9);
  assert.equal(DEFAULT_PARAMS.tauLow, 0.5);
  assert.equal(DEFAULT_PARAMS.tauHigh, 0.75);
});

test('parameters are validated against their ranges and relations', () => {
  assert.throws(() => resolveParams({ kappa: 1.5 }), /kappa/);
  assert.throws(() => resolveParams({ tau: 0 }), /tau/);
  assert.throws(() => resolveParams({ tmax: 2.5 }), /integer/);
  assert.throws(() => resolveParams({ alpha: 0.2, shift: 0.1 }), /Lemma 1/);
  assert.throws(() => resolveParams({ tauLow: 0.8, tauHigh: 0.7 }), /tau-low/);
  assert.throws(() => resolveParams({ nonsense: 1 } as never), /unknown parameter/);
  assert.equal(resolveParams({ kappa: 0.3 }).kappa, 0.3);
  assert.throws(() => parseOperatorList('core,vote'), /vote/);
});
