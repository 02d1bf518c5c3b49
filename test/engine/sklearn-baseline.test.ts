// The benchmark's baseline (bench/sklearn-baseline.py: scikit-learn's char 4-gram TF-IDF, scipy
// products, a vectorised replicator; and its vectorised-numpy TF-IDF variant) computes what
// `score --operators core` computes, so the throughput ratio compares like with like. Skipped
// when no python3 with scikit-learn and scipy is installed (scripts/setup-tests.sh installs them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { rng, randomPlan, synthRollouts } from '../../scripts/synth';
import { scratchDir } from '../scratch';
import { pythonWith, skipWithoutPython } from '../tools';

const python = pythonWith('sklearn', 'scipy', 'numpy');

function groups(): string {
  const r = rng(23);
  const lines: string[] = [];
  for (let q = 0; q < 9; q++) {
    // Short and long texts; some groups with non-ASCII text (accents, a CJK run, an emoji outside
    // the BMP), which take other counting paths on both sides.
    const bytes = q % 3 === 0 ? 6000 : 400;
    const rollouts = synthRollouts(r, randomPlan(r, 12 + q * 4), { bytes, rich: true });
    if (q % 4 === 1) rollouts.forEach((ro, i) => (ro.response = (i % 2 ? 'Étant donné  x, ' : '') + ro.response + (i % 3 ? ' 因此答案是' : '')));
    if (q === 6) rollouts[0].response = '🙂 ' + rollouts[0].response;
    lines.push(JSON.stringify({ kind: 'group', step: 0, question_id: `q${q}`, rollouts }));
  }
  return lines.join('\n') + '\n';
}

test('the scikit-learn baseline and its numpy variant agree with score (core) within 1e-6', { skip: skipWithoutPython('sklearn', 'scipy', 'numpy') }, () => {
  const dir = scratchDir('cl-sklearn-');
  const file = join(dir, 'groups.jsonl');
  writeFileSync(file, groups());
  const ts = execFileSync(process.execPath, ['dist/cli.js', 'score', file, '--operators', 'core', '--jobs', '0'], { encoding: 'utf8' })
    .trim().split('\n').map((l) => JSON.parse(l));
  for (const impl of ['sklearn', 'numpy']) {
    const py = execFileSync(python!, ['bench/sklearn-baseline.py', file, '--impl', impl], { encoding: 'utf8' }).trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(py.length, ts.length);
    py.forEach((want, k) => {
      const got = ts[k].results.core;
      const where = `${impl} ${want.question_id}`;
      assert.equal(ts[k].question_id, want.question_id);
      assert.equal(got.label, want.label, `${where}: label`);
      assert.ok(Math.abs(got.gate - want.gate) <= 1e-6, `${where}: gate ${got.gate} vs ${want.gate}`);
      assert.ok(got.gate > 0, `${where}: a group with pairs`);
      want.rewards.forEach((v: number, i: number) => assert.ok(Math.abs(v - got.rewards[i]) <= 1e-6, `${where}: rewards[${i}]`));
      want.mass.forEach((v: number, i: number) => assert.ok(Math.abs(v - got.mass[i]) <= 1e-6, `${where}: mass[${i}]`));
    });
  }
});
