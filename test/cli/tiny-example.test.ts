// examples/tiny-ttrl-run, the README's first run (a real model's test-time RL run, written by
// experiments/tiny-ttrl): report and health open it cleanly, every group is 16 sampled roll-outs
// with the model's per-token log-probs and the ground truth logged beside them, and its confidences
// reach the premise (not "missing").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const RUN = 'examples/tiny-ttrl-run';

function cli(args: string[]) {
  const r = spawnSync(process.execPath, ['dist/cli.js', ...args, '--no-cache'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('the tiny TTRL example: whole groups of 16 roll-outs with token log-probs and a logged truth', () => {
  const files = readdirSync(RUN).filter((f) => f.endsWith('.jsonl'));
  assert.ok(files.length > 1);
  const groups = new Map<string, number>();
  for (const f of files) {
    for (const line of readFileSync(join(RUN, f), 'utf8').split('\n').filter(Boolean)) {
      const r = JSON.parse(line);
      assert.equal(r.kind, 'rollout');
      assert.equal(r.token_logprobs.length, r.tokens.length);
      assert.ok(r.token_logprobs.every((x: number) => x <= 0));
      assert.equal(typeof r.ground_truth, 'string');
      assert.equal(r.extra.operator, 'core');
      const k = `${r.step}/${r.question_id}`;
      groups.set(k, (groups.get(k) ?? 0) + 1);
    }
  }
  assert.ok([...groups.values()].every((n) => n === 16), 'every group holds 16 roll-outs');
});

test('the tiny TTRL example opens cleanly in report and health', () => {
  const r = cli(['report', RUN, '--json']);
  assert.equal(r.code, 0, r.err);
  const rep = JSON.parse(r.out);
  assert.equal(rep.steps.length, readdirSync(RUN).filter((f) => f.endsWith('.jsonl')).length);
  assert.ok(rep.total.groups > 0);
  assert.ok(rep.groups.every((g: { confidence: string }) => g.confidence === 'used'));
  const h = cli(['health', RUN, '--json']);
  assert.equal(h.code, 0, h.err);
  const hj = JSON.parse(h.out);
  assert.equal(hj.groups, rep.total.groups);
  assert.ok(typeof hj.premise.label.auroc === 'number' && typeof hj.premise.truth.auroc === 'number', JSON.stringify(hj.premise));
  const text = cli(['report', RUN]);
  assert.equal(text.code, 0, text.err);
});
