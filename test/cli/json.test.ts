// score, report --json and health --json: one key style (snake_case), each valid against its
// schema in docs/schemas/; report --json has the per-step table and the validation section.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import Ajv2020 from 'ajv/dist/2020';

const ajv = new Ajv2020({ allErrors: true, strict: false });
const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
const schema = (name: string) => compiled.get(name) ?? compiled.set(name, ajv.compile(JSON.parse(readFileSync(`docs/schemas/${name}.schema.json`, 'utf8')))).get(name)!;

function cli(args: string[]) {
  const r = spawnSync(process.execPath, ['dist/cli.js', ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Every object key that is not snake_case (data keys such as "competence-floor" have no capitals either). */
function camelKeys(v: unknown, path = '$', out: string[] = []): string[] {
  if (Array.isArray(v)) v.forEach((x, i) => camelKeys(x, `${path}[${i}]`, out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) (/[A-Z]/.test(k) && out.push(`${path}.${k}`), camelKeys(x, `${path}.${k}`, out));
  return out;
}

test('score lines, report --json and health --json: snake_case keys, valid against their schemas', () => {
  const s = cli(['score', 'examples/demo-run']);
  const validScore = schema('score');
  for (const l of s.out.trim().split('\n')) {
    const o = JSON.parse(l);
    assert.ok(validScore(o), JSON.stringify(validScore.errors));
    assert.deepEqual(camelKeys(o), []);
  }
  const r = cli(['report', 'examples/demo-run', '--json']);
  assert.equal(r.code, 0, r.err);
  const rep = JSON.parse(r.out);
  const validReport = schema('report');
  assert.ok(validReport(rep), JSON.stringify(validReport.errors));
  assert.deepEqual(camelKeys(rep), []);
  assert.deepEqual(rep.steps.map((x: { step: number; groups: number }) => [x.step, x.groups]), [[0, 12], [1, 12], [2, 12]]);
  assert.equal(rep.total.flips.core, 5);
  assert.equal(rep.groups.length, 36);
  const h = cli(['health', 'examples/demo-run', '--json']);
  const hj = JSON.parse(h.out);
  const validHealth = schema('health');
  assert.ok(validHealth(hj), JSON.stringify(validHealth.errors));
  assert.deepEqual(camelKeys(hj), []);
});

test('report --json on a run with a validation stream, and on a folder of several runs (each on its own)', () => {
  const one = JSON.parse(cli(['report', 'test/fixtures/logs/writers/verl-uid', '--json']).out);
  assert.equal(one.runs, undefined);
  assert.deepEqual(one.validation.steps.map((x: { step: number }) => x.step), [0, 2]);
  assert.equal(one.validation.total.with_truth, 12);
  const many = cli(['report', 'test/fixtures/logs/writers', '--json']);
  const m = JSON.parse(many.out);
  assert.ok(schema('report')(m));
  const runs = m.runs.map((x: { run: string }) => x.run);
  for (const r of ['verl-uid', 'verl-legacy', 'nemo-rl/logs/exp_001', 'ttrl-dapo']) assert.ok(runs.includes(r), `${r} in ${runs}`);
  // verl-uid's training steps are its own, with its val/ dump as its validation section
  const uid = m.runs.find((x: { run: string }) => x.run === 'verl-uid');
  assert.deepEqual(uid.steps.map((x: { step: number; groups: number }) => [x.step, x.groups]), [[1, 4], [2, 4], [3, 4]]);
  assert.equal(uid.validation.total.groups, 12);
  // the text report has one section per run, never summed steps
  const text = cli(['report', 'test/fixtures/logs/writers']).out;
  assert.match(text, /^test\/fixtures\/logs\/writers: \d+ runs; operators /);
  assert.match(text, /\nrun verl-uid: 3 steps, 12 groups, 96 roll-outs;/);
});

test('report on a run with only a validation stream (verl W&B val/generations) prints its validation section', () => {
  const r = cli(['report', 'test/fixtures/logs/writers/wandb-verl']);
  assert.equal(r.code, 0, r.err);
  assert.doesNotMatch(r.err, /no groups/);
  assert.match(r.out, /no training groups \(a validation stream only\)/);
  assert.match(r.out, /validation: 3 steps, 9 groups, 18 roll-outs/);
  const j = JSON.parse(cli(['report', 'test/fixtures/logs/writers/wandb-verl', '--json']).out);
  assert.equal(j.validation.total.groups, 9);
});

test('wording: singular and plural, and the glossary the report links to defines its terms', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cl-wording-'));
  try {
    writeFileSync(join(dir, 'one.jsonl'), JSON.stringify({ kind: 'group', step: 3, question_id: 'q', ground_truth: '1', rollouts: ['1', '1', '2'].map((a) => ({ response: `so \\boxed{${a}}`, reward: a === '1' ? 1 : 0 })) }) + '\n');
    const one = cli(['report', dir, '--configured-operator', 'majority']).out;
    assert.match(one, /: 1 step, 1 group, 3 roll-outs;/);
    assert.match(one, /over 1 group\b/);
    assert.match(one, /reward mismatch: none \(1 group checked against majority\)/);
    assert.doesNotMatch(one, /\b1 (steps|groups|runs|roll-outs|questions)\b/);
    const h = cli(['health', dir]).out;
    assert.doesNotMatch(h, /\b1 (steps|groups|runs|roll-outs|questions)\b/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const text = cli(['report', 'examples/demo-run']).out;
  assert.match(text, /docs\/glossary\.md/);
  const glossary = readFileSync('docs/glossary.md', 'utf8');
  for (const term of ['Regime', 'saturated', 'contested', 'competence floor', 'Flip', 'Gate', '(k)', 'Reward mismatch', 'Configured operator']) assert.ok(glossary.includes(`**${term}**`), term);
});
