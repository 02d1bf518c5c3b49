// One source for each fact: the operator list and the parameter table are written once
// (src/engine/operators/ids.ts, src/engine/params.ts); package.json's settings, the registry, the
// sliders and the labels are held to them here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADV_SCALES, DEFAULT_MAX_GROUP_SIZE, DEFAULT_PARAMS, OPERATORS, OPERATOR_IDS, OPERATOR_LABELS, PARAM_SPECS, isOperatorId, operatorsUsing } from '../../src/engine';
import { SLIDER_PARAMS } from '../../src/extension/slider-params';
import { OPERATOR_STYLES } from '../../webview/dashboard/style';

interface Setting {
  type: string | string[];
  default: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  enum?: unknown[];
}
const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'));
const settings: Record<string, Setting> = pkg.contributes.configuration.properties;

test('every numeric parameter is a setting with the table’s default, type and range', () => {
  for (const p of PARAM_SPECS) {
    const name = p.id === 'advEps' ? 'consensusLens.advantage.eps' : `consensusLens.params.${p.id}`;
    const s = settings[name];
    assert.ok(s, `${name} is missing from package.json`);
    const def = DEFAULT_PARAMS[p.id];
    assert.equal(s.default, def, `${name} default`);
    const types = Array.isArray(s.type) ? s.type : [s.type];
    assert.deepEqual(types, [p.integer ? 'integer' : 'number', ...(p.defaultsTo ? ['null'] : [])], `${name} type`);
    assert.equal(def === null, !!p.defaultsTo, `${p.id}: a null default means "another parameter's value"`);
    if (p.minExclusive) {
      assert.equal(s.exclusiveMinimum, p.min, `${name} exclusiveMinimum`);
      assert.equal(s.minimum, undefined, `${name} minimum`);
    } else {
      assert.equal(s.minimum, p.min, `${name} minimum`);
      assert.equal(s.exclusiveMinimum, undefined, `${name} exclusiveMinimum`);
    }
    assert.equal(s.maximum, p.max, `${name} maximum`);
  }
});

test('no setting names a parameter the table does not have', () => {
  const ids = new Set(PARAM_SPECS.map((p) => p.id as string));
  for (const name of Object.keys(settings).filter((k) => k.startsWith('consensusLens.params.'))) assert.ok(ids.has(name.slice('consensusLens.params.'.length)), name);
});

test('enums and other defaults follow the engine', () => {
  assert.deepEqual(settings['consensusLens.defaultOperator'].enum, [...OPERATOR_IDS]);
  assert.ok(isOperatorId(settings['consensusLens.defaultOperator'].default));
  assert.deepEqual(settings['consensusLens.advantage.scale'].enum, [...ADV_SCALES]);
  assert.equal(settings['consensusLens.advantage.scale'].default, DEFAULT_PARAMS.advScale);
  assert.equal(settings['consensusLens.maxGroupSize'].default, DEFAULT_MAX_GROUP_SIZE);
});

test('the registry, labels and chart styles cover the operator list exactly, in its order', () => {
  assert.deepEqual(
    OPERATORS.map((o) => o.id),
    ['majority', 'cisc', 'ec', 'core', 't3rl', 'msttrl', 'empo', 'selfcertainty', 'entropy', 'likelihood', 'novelty'],
  );
  assert.deepEqual(
    OPERATORS.filter((o) => o.family === 'confidence').map((o) => o.id),
    ['selfcertainty', 'entropy', 'likelihood'],
  );
  assert.deepEqual(Object.keys(OPERATOR_LABELS), [...OPERATOR_IDS]);
  assert.deepEqual(Object.keys(OPERATOR_STYLES), [...OPERATOR_IDS]);
  for (const o of OPERATORS) {
    assert.equal(typeof o.run, 'function');
    for (const p of o.params)
      assert.ok(
        PARAM_SPECS.some((s) => s.id === p),
        `${o.id}: unknown parameter ${p}`,
      );
  }
  assert.equal(isOperatorId('majority'), true);
  assert.equal(isOperatorId('Majority'), false);
  assert.equal(isOperatorId(undefined), false);
  assert.equal(isOperatorId('toString'), false);
});

test('the sliders come from the parameter table', () => {
  assert.deepEqual(
    SLIDER_PARAMS.map((s) => s.key),
    ['kappa', 'tau', 'alpha', 'omega', 'lambda'],
  );
  for (const s of SLIDER_PARAMS) {
    const spec = PARAM_SPECS.find((p) => p.id === s.key)!;
    assert.equal(s.default, DEFAULT_PARAMS[spec.id]);
    assert.equal(s.label, spec.symbol);
    assert.ok(s.min >= spec.min && s.max <= spec.max, `${s.key}: the slider stays inside the valid range`);
    assert.deepEqual(s.operators, operatorsUsing(spec.id));
  }
  assert.deepEqual(operatorsUsing('tau'), ['cisc', 'core']);
  assert.deepEqual(operatorsUsing('kappa'), ['ec', 'core']);
});
