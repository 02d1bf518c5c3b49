// Logs as the frameworks' own writer code writes them (fixtures by scripts/make-log-fixtures.py,
// the TRL parquet ones by real pandas 2 / 3 + pyarrow): every defect that misread them has a test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { collect, jsonl, tempDir, write } from './helpers.js';
import { RunIndex, readRolloutText, runLabel, type Notice } from '../../src/logs/log-layer.js';
import { buildReport, runReport } from '../../src/cli/report.js';
import { pickRewardColumns } from '../../src/logs/trl.js';

const FX = 'test/fixtures/logs/writers';

function capture() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  return { io: { stdin: new PassThrough(), stdout, stderr }, out: () => out, err: () => err };
}

const problems = (ns: Notice[]) => ns.filter((n) => n.level !== 'info');

for (const pandas of ['pandas2', 'pandas3']) {
  test(`TRL ≥ 1.0 parquet (${pandas} + pyarrow): the logged reward is the reward functions' columns only, never the log_extra columns`, async () => {
    const { groups, notices } = await collect(join(FX, `trl-1x-${pandas}`));
    assert.deepEqual(problems(notices), []);
    assert.equal(groups.length, 128); // 2 files × 64 prompts × 16 completions (1,024 rows a file)
    for (const g of groups) {
      assert.equal(g.rollouts.length, 16);
      for (const r of g.rollouts) {
        const x = (r as { extra?: Record<string, unknown> }).extra!;
        const acc = x.accuracy_reward as number | null;
        // format 0.5 + accuracy (NaN → missing, skipped like TRL's nansum); never + num_tokens / entropy
        assert.equal(r.reward, 0.5 + (acc ?? 0));
        assert.equal(typeof x.num_tokens, 'number');
        assert.ok((x.num_tokens as number) > 100);
      }
    }
    // the NaN accuracy (a nullable double in the file) reads as missing
    assert.ok(groups.some((g) => g.rollouts.some((r) => (r as { extra?: Record<string, unknown> }).extra!.accuracy_reward === null)));
    // the texts read back by row
    const g = groups[3];
    assert.match(await readRolloutText(g.rollouts[0].source as never), /\\boxed\{/);
  });
}

test('TRL ≥ 1.0 parquet without trainer_state.json: reward columns by their names, the extras named in one notice', async () => {
  const { dir, cleanup } = tempDir();
  try {
    mkdirSync(join(dir, 'completions'), { recursive: true });
    copyFileSync(join(FX, 'trl-1x-pandas3/completions/train/completions_00001.parquet'), join(dir, 'completions/completions_00001.parquet'));
    copyFileSync(join(FX, 'trl-1x-pandas3/completions/train/completions_00002.parquet'), join(dir, 'completions/completions_00002.parquet'));
    const { groups, notices } = await collect(dir);
    const warned = problems(notices);
    assert.equal(warned.length, 1, JSON.stringify(warned)); // once per run, not per file
    assert.match(warned[0].message, /format_reward, accuracy_reward by their names; entropy, num_tokens read as log_extra columns/);
    for (const g of groups) for (const r of g.rollouts) assert.ok(typeof r.reward === 'number' && r.reward <= 1.5);
  } finally {
    cleanup();
  }
});

test('pickRewardColumns: what TRL recorded decides; else the leading reward-named columns', () => {
  assert.deepEqual(pickRewardColumns(['f', 'g', 'num_tokens'], new Set(['f', 'g'])).columns, ['f', 'g']);
  assert.deepEqual(pickRewardColumns(['correctness', 'len_penalty_reward', 'num_tokens', 'zz'], undefined).columns, ['correctness', 'len_penalty_reward']);
  assert.deepEqual(pickRewardColumns(['my_fn'], undefined).columns, ['my_fn']);
  assert.deepEqual(pickRewardColumns(['my_fn', 'n_tokens'], undefined).columns, ['my_fn']);
});

test('TRL 0.2x parquet (step/prompt/completion only): groups by prompt, no logged reward', async () => {
  const { groups, notices } = await collect(join(FX, 'trl-0.2x'));
  assert.deepEqual(problems(notices), []);
  assert.deepEqual(groups.map((g) => [g.step, g.rollouts.length]), [[1, 4], [1, 4], [1, 4], [2, 4], [2, 4], [2, 4]]);
  for (const g of groups) for (const r of g.rollouts) assert.equal(r.reward, null);
});

test("a TRL output_dir: config.json and trainer_state.json are skipped quietly in one summary line", async () => {
  const c = capture();
  const code = await runReport([join(FX, 'trl-1x-pandas2'), '--jobs', '0'], c.io);
  assert.equal(code, 0, c.err());
  assert.doesNotMatch(c.err(), /error|warning/);
  const lines = c.err().split('\n').filter((l) => /config\.json|trainer_state/.test(l));
  assert.equal(lines.length, 1);
  assert.match(lines[0], /2 files that are not logs skipped \(config\.json, checkpoint-2\/trainer_state\.json\)/);
});

test('a binary file whose first byte is "{" is skipped after its first block, never scanned whole', async () => {
  const { dir, cleanup } = tempDir();
  try {
    // 64 KiB of binary after the brace, then valid native records: a scan past the first block would load them
    const head = Buffer.concat([Buffer.from('{'), Buffer.alloc(70_000, 0)]);
    const tail = Buffer.from(jsonl([{ kind: 'group', step: 1, question_id: 'hidden', rollouts: [{ response: 'x' }] }]).repeat(50));
    write(dir, 'weights.bin.partial', Buffer.concat([head, Buffer.from('\n'), tail]));
    write(dir, 'run.jsonl', jsonl([{ kind: 'group', step: 1, question_id: 'ok', rollouts: [{ response: 'a' }, { response: 'b' }] }]));
    const { groups, notices } = await collect(dir);
    assert.deepEqual(groups.map((g) => g.questionId), ['ok']);
    assert.deepEqual(problems(notices), []);
    assert.ok(notices.some((n) => /1 file that is not logs skipped \(weights\.bin\.partial\)/.test(n.message)));
    // named on its own it is an error that says why
    const one = await collect(join(dir, 'weights.bin.partial'));
    assert.equal(one.groups.length, 0);
    assert.match(one.notices.find((n) => n.level === 'error')!.message, /not a text file/);
  } finally {
    cleanup();
  }
});

test('verl validation dumps are a stream of their own: own usual size, no size warnings, no reward-mismatch, validation accuracy in the report', async () => {
  for (const run of ['verl-legacy', 'verl-uid']) {
    const { groups, notices } = await collect(join(FX, run));
    assert.deepEqual(problems(notices), [], run);
    const val = groups.filter((g) => g.stream === 'validation');
    assert.equal(val.length, 12);
    for (const g of val) {
      assert.equal(g.rollouts.length, 4);
      for (const r of g.rollouts) assert.equal(r.reward, null, 'a validation score is not a consensus reward');
    }
    const rep = await buildReport(join(FX, run), { jobs: 0 }, () => undefined);
    assert.deepEqual(rep.steps.map((s) => [s.step, s.groups]), [[1, 4], [2, 4], [3, 4]], 'training steps hold training groups only');
    assert.ok(rep.validation, 'a validation section');
    assert.deepEqual(rep.validation!.steps.map((s) => [s.step, s.groups, s.rollouts]), [[0, 6, 24], [2, 6, 24]]);
    assert.equal(rep.validation!.total.with_truth, 12);
    assert.equal(typeof rep.validation!.total.accuracy.majority, 'number');
    assert.equal(rep.validation!.total.reward_mismatch_groups, 0);
  }
  const c = capture();
  assert.equal(await runReport([join(FX, 'verl-legacy'), '--jobs', '0'], c.io), 0, c.err());
  assert.match(c.out(), /\nvalidation: 2 steps, 12 groups, 48 roll-outs/);
  assert.doesNotMatch(c.err(), /usual group size/);
});

test('verl gts lists: every accepted form counts (a label equal to any is correct)', async () => {
  const { groups } = await collect(join(FX, 'verl-uid'));
  const frac = groups.filter((g) => g.groundTruth === '\\frac{3}{4}' && !g.stream);
  assert.equal(frac.length, 3);
  for (const g of frac) assert.deepEqual(g.groundTruthForms, ['\\frac{3}{4}', '0.75']);
  // a run whose vote says 0.75: correct against the list, wrong against its first form alone
  const { dir, cleanup } = tempDir();
  try {
    const lines = Array.from({ length: 4 }, (_, i) => ({ input: 'Simplify 6/8.', output: `so \\boxed{0.75} (${i})`, gts: ['\\frac{2}{3}', '0.75'], score: 1.0, step: 1 }));
    write(dir, 'rollout/1.jsonl', jsonl(lines));
    const rep = await buildReport(dir, { jobs: 0, operators: ['majority'] }, () => undefined);
    assert.equal(rep.groups[0].correct.majority, true);
    assert.equal(rep.total.accuracy.majority, 1);
  } finally {
    cleanup();
  }
});

test('verl V1 multi-turn sessions: grouped by uid.rsplit("_", 2)[0] (uuids with underscores), one roll-out per session: its final output', async () => {
  const { groups, notices } = await collect(join(FX, 'verl-v1'));
  assert.deepEqual(problems(notices), []);
  assert.deepEqual(groups.map((g) => [g.step, g.rollouts.length]), [[1, 4], [1, 4], [1, 4], [2, 4], [2, 4], [2, 4]]);
  for (const g of groups) for (const r of g.rollouts) assert.doesNotMatch(r.response, /^Turn \d+:/, 'an earlier turn never votes');
  // the same through the followable index
  const idx = await RunIndex.open(join(FX, 'verl-v1'), { follow: false, onNotice: () => undefined });
  try {
    assert.deepEqual(idx.groups().map((e) => e.n), [4, 4, 4, 4, 4, 4]);
    for (const e of idx.groups()) {
      const g = await idx.loadGroup(e.key);
      for (const r of g.rollouts) assert.doesNotMatch(r.response, /^Turn \d+:/);
    }
  } finally {
    idx.close();
  }
});

test("a TTRL port's pseudo-label in gts is detected and left out of accuracy; --ground-truth ignore drops it", async () => {
  const notices: Notice[] = [];
  const rep = await buildReport(join(FX, 'ttrl-dapo'), { jobs: 0 }, (n) => notices.push(n));
  assert.match(rep.ground_truth_note ?? '', /looks like the pseudo-label: equal to the vote in 12 of 12 training groups/);
  // said, and still shown: the accuracy against it is agreement with the vote if it is the vote
  assert.equal(rep.total.with_truth, 12);
  assert.deepEqual(rep.ground_truth_looks_like_vote, { groups: 12, matching: 12 });
  const used = await buildReport(join(FX, 'ttrl-dapo'), { jobs: 0, groundTruth: 'use' }, () => undefined);
  assert.equal(used.ground_truth_note, undefined);
  assert.equal(used.total.with_truth, 12);
  assert.ok(notices.some((n) => n.level === 'warning' && /pseudo-label/.test(n.message)));
  const ignored = await buildReport(join(FX, 'ttrl-dapo'), { jobs: 0, groundTruth: 'ignore' }, () => undefined);
  assert.equal(ignored.ground_truth_note, undefined);
  assert.equal(ignored.total.with_truth, 0);
  assert.ok(ignored.groups.every((g) => g.ground_truth === null));
  // real ground truth is kept
  const real = await buildReport(join(FX, 'verl-uid'), { jobs: 0 }, () => undefined);
  assert.equal(real.ground_truth_note, undefined);
  assert.equal(real.total.with_truth, 12);
  // TTRL's own fork dumps no gts at all
  const { groups } = await collect(join(FX, 'ttrl'));
  assert.ok(groups.every((g) => (g.groundTruth ?? null) === null && g.rollouts.length === 32));
  const c = capture();
  assert.equal(await runReport([join(FX, 'ttrl-dapo'), '--ground-truth', 'nope'], c.io).catch((e) => e.message), '--ground-truth must be "auto", "use" or "ignore", got "nope"');
});

test('NeMo RL: a line without a content list is skipped with its line number (the rest of the file is read)', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const line = (c: unknown) => ({ content: c, rewards: [1], generation_logprobs: [[-0.1, -0.2]], input_lengths: [1] });
    write(dir, 'train_data_step1.jsonl', jsonl([line([['prompt', 'so \\boxed{1}']]), { rewards: [0], generation_logprobs: [[-0.3]] }, line('not a list'), line([['prompt', 'so \\boxed{2}']])]));
    const { groups, notices } = await collect(dir);
    assert.deepEqual(groups.map((g) => g.rollouts.length), [2]);
    assert.deepEqual(notices.filter((n) => n.level === 'warning').map((n) => [n.line, /field "content" must be a list/.test(n.message)]), [[2, true], [3, true]]);
  } finally {
    cleanup();
  }
});

test('NeMo RL train_data_step{N}.jsonl: mean log-prob of the generated tokens is the confidence; val files are the validation stream', async () => {
  const { groups, notices } = await collect(join(FX, 'nemo-rl'));
  assert.deepEqual(problems(notices), []);
  const train = groups.filter((g) => !g.stream);
  const val = groups.filter((g) => g.stream === 'validation');
  assert.deepEqual(train.map((g) => [g.step, g.rollouts.length]), [[1, 8], [1, 8], [1, 8], [1, 8], [2, 8], [2, 8], [2, 8], [2, 8]]);
  assert.equal(val.length, 4);
  // roll-out j of a prompt: 8 + j generated tokens, log-probs -(0.05 + 0.06·((7k + j) mod 5))
  for (const g of groups) {
    g.rollouts.forEach((r, j) => {
      const n = 8 + j;
      let s = 0;
      for (let k = 0; k < n; k++) s += -(0.05 + (0.3 * ((k * 7 + j) % 5)) / 5);
      assert.ok(Math.abs((r.meanLogprob as number) - s / n) < 1e-12, `${g.step} ${j}: ${r.meanLogprob} vs ${s / n}`);
    });
  }
  assert.ok(train.every((g) => g.rollouts.every((r) => r.reward === 0 || r.reward === 1)));
  assert.match(train[0].rollouts[0].response, /\\boxed\{/);
  // the report runs CISC and CoRE with confidence
  const rep = await buildReport(join(FX, 'nemo-rl'), { jobs: 0 }, () => undefined);
  assert.ok(rep.groups.filter((g) => !g.stream).every((g) => g.confidence === 'used'));
});

test('W&B table files: TRL completions tables (rewards from wandb-summary.json) and verl validation generations (re-logged rows read once)', async () => {
  const trl = await collect(join(FX, 'wandb-trl'));
  assert.deepEqual(problems(trl.notices), []);
  assert.deepEqual(trl.groups.map((g) => [g.step, g.rollouts.length]), [[1, 4], [1, 4], [1, 4], [2, 4], [2, 4], [2, 4]]);
  for (const g of trl.groups) for (const r of g.rollouts) assert.ok(r.reward === 0.5 || r.reward === 1.5);
  assert.match(await readRolloutText(trl.groups[0].rollouts[1].source as never), /\\boxed\{/);
  const verl = await collect(join(FX, 'wandb-verl'));
  assert.deepEqual(problems(verl.notices), []);
  assert.deepEqual(verl.groups.map((g) => [g.step, g.rollouts.length]), [[0, 2], [0, 2], [0, 2], [5, 2], [5, 2], [5, 2], [10, 2], [10, 2], [10, 2]]);
  assert.ok(verl.groups.every((g) => g.stream === 'validation'));
  const idx = await RunIndex.open(join(FX, 'wandb-verl'), { follow: false, onNotice: (n) => n.level !== 'info' && assert.fail(n.message) });
  try {
    assert.equal(idx.size, 9);
    const g = await idx.loadGroup(idx.groups()[4].key);
    assert.deepEqual(g.rollouts.map((r) => r.response), verl.groups[4].rollouts.map((r) => r.response));
  } finally {
    idx.close();
  }
});

test('every committed real-writer fixture reads the same through RunIndex as through readRun', async () => {
  for (const name of readdirSync(FX)) {
    const { groups } = await collect(join(FX, name));
    const idx = await RunIndex.open(join(FX, name), { follow: false, onNotice: () => undefined });
    try {
      const es = idx.groups();
      assert.equal(es.length, groups.length, name);
      for (let i = 0; i < es.length; i++) {
        const g = await idx.loadGroup(es[i].key);
        assert.deepEqual([g.step, g.questionId, g.run, g.stream], [groups[i].step, groups[i].questionId, groups[i].run, groups[i].stream], name);
        assert.deepEqual(g.rollouts.map((r) => [r.response, r.reward, r.meanLogprob]), groups[i].rollouts.map((r) => [r.response, r.reward, r.meanLogprob]), name);
      }
    } finally {
      idx.close();
    }
  }
});

test('a verl run is named after its run folder, never its leaf dump folder', () => {
  assert.equal(runLabel('/data/runs/qwen-ttrl-aime/rollout'), 'qwen-ttrl-aime');
  assert.equal(runLabel('/data/runs/qwen-ttrl-aime/val/'), 'qwen-ttrl-aime (validation)');
  assert.equal(runLabel('/data/runs/qwen-ttrl-aime/rollout/12.jsonl'), 'qwen-ttrl-aime');
  assert.equal(runLabel('/out/grpo-1/completions/train'), 'grpo-1');
  assert.equal(runLabel('/data/runs/my-run'), 'my-run');
});

test('repeated prompts within a step (legacy verl, no uid): score/report and the followed index say so the same way, once', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const lines = (p: string, n: number) => Array.from({ length: n }, (_, i) => ({ input: p, output: `${p} ${i} \\boxed{${i % 2}}`, gts: '1', score: i % 2, step: 1 }));
    write(dir, 'rollout/1.jsonl', jsonl([...lines('a', 4), ...lines('b', 4), ...lines('c', 4), ...lines('d', 4), ...lines('a', 4)]));
    const { groups, notices } = await collect(dir);
    assert.deepEqual(groups.map((g) => g.rollouts.length), [8, 4, 4, 4]);
    const said = notices.filter((n) => /has 8 roll-outs/.test(n.message));
    assert.equal(said.length, 1);
    assert.match(said[0].message, /the run's usual group size is 4 \(the prompt is probably repeated within the step/);
  } finally {
    cleanup();
  }
});

test('followed: a prompt repeated within a step reopens its group: printed twice at most, never once per late line, with the same warning once', async () => {
  const { dir, cleanup } = tempDir();
  const notices: Notice[] = [];
  // Lines arrive 120 ms apart; the idle period is long enough that a loaded machine's late timer
  // does not split them into more completions than the two the test allows.
  const idx = await RunIndex.open(dir, { follow: true, poll: true, pollMs: 50, idleMs: 1500, onNotice: (n) => notices.push(n) });
  const completions = new Map<string, number>();
  idx.onDidChange((e) => {
    for (const k of e.completed) completions.set(k, (completions.get(k) ?? 0) + 1);
    for (const k of e.changed) completions.set(k, (completions.get(k) ?? 0) + 100); // a change event per line is the defect
  });
  try {
    const lines = (p: string, n: number) => Array.from({ length: n }, (_, i) => ({ input: p, output: `${p} ${i} \\boxed{${i % 2}}`, score: i % 2, step: 1 }));
    const f = write(dir, 'rollout/1.jsonl', jsonl([...lines('a', 4), ...lines('b', 4), ...lines('c', 4)]));
    const t0 = Date.now();
    while (idx.groups().filter((e) => e.complete).length < 3 && Date.now() - t0 < 8000) await new Promise((r) => setTimeout(r, 25));
    // the repeated prompt arrives line by line
    for (const l of lines('a', 4)) {
      write(dir, 'rollout/1.jsonl', readFileSync(f, 'utf8') + JSON.stringify(l) + '\n');
      await new Promise((r) => setTimeout(r, 120));
    }
    const t1 = Date.now();
    while (!(idx.groups()[0].complete && idx.groups()[0].n === 8) && Date.now() - t1 < 8000) await new Promise((r) => setTimeout(r, 25));
    await idx.settled();
    const a = idx.groups()[0];
    assert.equal(a.n, 8);
    assert.equal(a.complete, true);
    assert.ok((completions.get(a.key) ?? 0) <= 2, `completed ${completions.get(a.key)} times`);
    assert.equal(notices.filter((n) => /has 8 roll-outs; the run's usual group size is 4 \(the prompt is probably repeated/.test(n.message)).length, 1);
  } finally {
    idx.close();
    cleanup();
  }
});

test('the index says which runs have confidences, and why not (the explorer shows it)', async () => {
  const nemo = await RunIndex.open(join(FX, 'nemo-rl'), { follow: false, onNotice: () => undefined });
  const verl = await RunIndex.open(join(FX, 'verl-legacy'), { follow: false, onNotice: () => undefined });
  const trl = await RunIndex.open(join(FX, 'trl-1x-pandas3'), { follow: false, onNotice: () => undefined });
  try {
    assert.deepEqual(nemo.confidence(), { rollouts: 72, withConfidence: 72, formats: ['nemo-rl'], why: null });
    const v = verl.confidence();
    assert.equal(v.withConfidence, 0);
    assert.match(v.why ?? '', /verl dumps carry no log-probs/);
    assert.match(trl.confidence().why ?? '', /TRL completions logs carry no log-probs/);
  } finally {
    nemo.close();
    verl.close();
    trl.close();
  }
});

test('detectLogFile tells each writer\'s files from the files next to them (for finding runs in a workspace)', async () => {
  const { detectLogFile } = await import('../../src/logs/log-layer.js');
  const pick = (dir: string) => join(FX, dir, readdirSync(join(FX, dir))[0]);
  assert.equal(await detectLogFile(join(FX, 'verl-uid/rollout/1.jsonl')), 'verl');
  assert.equal(await detectLogFile(join(FX, 'nemo-rl/logs/exp_001/train_data_step1.jsonl')), 'nemo-rl');
  assert.equal(await detectLogFile(join(FX, 'trl-1x-pandas3/completions/train/completions_00001.parquet')), 'trl');
  assert.equal(await detectLogFile(pick('wandb-trl/wandb/offline-run-20250101_000000-abc123/files/media/table')), 'wandb');
  assert.equal(await detectLogFile(join(FX, 'trl-1x-pandas3/config.json')), undefined);
  assert.equal(await detectLogFile(join(FX, 'trl-1x-pandas3/checkpoint-2/trainer_state.json')), undefined);
  assert.equal(await detectLogFile('test/fixtures/logs/verl/rollout/1.jsonl'), 'verl');
});
