// prime-rl and SkyRL roll-out files as their own writer code writes them
// (scripts/make-framework-fixtures.py; docs/log-formats.md names the versions), read in one pass
// and followed live: a half-written last line waits, an appended step is read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { collect, tempDir } from './helpers.js';
import { RunIndex, detectLogFile, readRolloutText, runLabel, type Notice } from '../../src/logs/log-layer.js';

const FX = 'test/fixtures/logs/writers';
const problems = (ns: Notice[]) => ns.filter((n) => n.level !== 'info');
const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

async function until(cond: () => boolean, ms = 8000): Promise<void> {
  const t0 = Date.now();
  while (!cond() && Date.now() - t0 < ms) await new Promise((r) => setTimeout(r, 50));
}

// ---- SkyRL ----

const SKY = join(FX, 'skyrl/export/dumped_evals');

test('SkyRL dumped_evals: a group per prompt of a data source file, the global_step folder is the step, validation stream, ground truth from env_extras', async () => {
  const { groups, notices } = await collect(join(FX, 'skyrl'));
  assert.deepEqual(problems(notices), []); // aggregated_results.jsonl is skipped quietly
  // 2 steps × 5 prompts (3 gsm8k + 2 aime), 4 samples each
  assert.deepEqual(groups.map((g) => [g.step, g.rollouts.length]), [...Array(5).fill([0, 4]), ...Array(5).fill([5, 4])]);
  for (const g of groups) {
    assert.equal(g.stream, 'validation');
    assert.equal(g.run, 'export/dumped_evals');
  }
  // every field against the files, line by line (a folder's files are read in name order)
  const file = lines(join(SKY, 'global_step_5_evals/aime.jsonl')).concat(lines(join(SKY, 'global_step_5_evals/openai_gsm8k.jsonl')));
  const step5 = groups.filter((g) => g.step === 5);
  const flat = step5.flatMap((g) => g.rollouts.map((r) => ({ g, r })));
  assert.equal(flat.length, file.length);
  flat.forEach(({ g, r }, i) => {
    const o = file[i];
    assert.equal(g.prompt, o.input_prompt);
    assert.equal(r.response, o.output_response);
    assert.equal(r.reward, null); // an evaluation's score is not a consensus reward
    const score = Array.isArray(o.score) ? (o.score as number[]).reduce((a, b) => a + b, 0) : o.score;
    assert.equal((r as { extra?: Record<string, unknown> }).extra!.score, score);
    assert.equal(g.groundTruth, ((o.env_extras as Record<string, Record<string, unknown>>).reward_spec.ground_truth as string));
    assert.equal(r.meanLogprob, null);
  });
  assert.ok(file.some((o) => Array.isArray(o.score)), 'the fixture holds a per-token reward list');
  // a question keeps its id across steps
  assert.deepEqual(groups.filter((g) => g.step === 0).map((g) => g.questionId), step5.map((g) => g.questionId));
  assert.equal(await readRolloutText(step5[1].rollouts[2].source as never), step5[1].rollouts[2].response);
  assert.equal(await detectLogFile(join(SKY, 'global_step_0_evals/aime.jsonl')), 'skyrl');
  assert.equal(await detectLogFile(join(SKY, 'global_step_0_evals/aggregated_results.jsonl')), undefined);
  assert.equal(runLabel(join(SKY, 'global_step_0_evals')), 'export');
});

test('SkyRL followed: a half-written last line waits, the next evaluation appended to the run is read', async () => {
  const { dir, cleanup } = tempDir();
  const notices: Notice[] = [];
  const src = readFileSync(join(SKY, 'global_step_0_evals/openai_gsm8k.jsonl'));
  const f0 = join(dir, 'dumped_evals/global_step_0_evals/openai_gsm8k.jsonl');
  mkdirSync(join(dir, 'dumped_evals/global_step_0_evals'), { recursive: true });
  // the file stops in the middle of its last line (of the last group)
  const cut = src.lastIndexOf('\n', src.length - 2) + 40;
  writeFileSync(f0, src.subarray(0, cut));
  const idx = await RunIndex.open(dir, { follow: true, poll: true, pollMs: 100, idleMs: 400, onNotice: (n) => notices.push(n) });
  try {
    await new Promise((r) => setTimeout(r, 1200));
    await idx.settled();
    const sizes = () => idx.groups().map((g) => [g.step, g.n, g.complete]);
    // a file that ends mid-line completes no group by idleness (its writer is still writing)
    assert.deepEqual(sizes(), [[0, 4, false], [0, 4, false], [0, 3, false]]);
    appendFileSync(f0, src.subarray(cut));
    cpSync(join(SKY, 'global_step_5_evals'), join(dir, 'dumped_evals/global_step_5_evals'), { recursive: true });
    await until(() => idx.groups().length === 8 && idx.groups().every((g) => g.complete));
    await idx.settled();
    // step 0's gsm8k file (3 prompts), then step 5's two files (3 + 2 prompts)
    assert.deepEqual(sizes(), [...Array(3).fill([0, 4, true]), ...Array(5).fill([5, 4, true])]);
    const g = await idx.loadGroup(idx.groups()[2].key);
    assert.equal(g.rollouts.length, 4);
    assert.match(g.rollouts[3].response, /\\boxed\{/);
    assert.deepEqual(problems(notices), []);
  } finally {
    idx.close();
    cleanup();
  }
});

// ---- prime-rl ----

const PRL = join(FX, 'prime-rl/outputs/rollouts');

function meanMasked(o: Record<string, unknown>): number {
  let s = 0;
  let n = 0;
  for (const st of o.trajectory as Array<{ tokens: { completion_logprobs: number[]; completion_mask: number[] } }>) {
    st.tokens.completion_logprobs.forEach((x, i) => {
      if (st.tokens.completion_mask[i] === 1) {
        s += x;
        n++;
      }
    });
  }
  return s / n;
}

test('prime-rl rollouts/step_N/train_rollouts.jsonl: a group per example_id and step, reward, trajectory log-probs as confidence, answer as ground truth; eval_rollouts the validation stream', async () => {
  const { groups, notices } = await collect(join(FX, 'prime-rl'));
  assert.deepEqual(problems(notices), []);
  const train = groups.filter((g) => !g.stream);
  const val = groups.filter((g) => g.stream === 'validation');
  assert.deepEqual(train.map((g) => [g.step, g.questionId, g.rollouts.length]), [1, 2, 3].flatMap((s) => [0, 1, 2, 3, 4].map((e) => [s, `default/${e}`, 4])));
  assert.deepEqual(val.map((g) => [g.step, g.rollouts.length]), Array(5).fill([2, 4]));
  for (const g of train) assert.equal(g.run, 'outputs/rollouts');
  for (const g of val) assert.equal(g.run, 'outputs/rollouts/eval');
  const file = lines(join(PRL, 'step_2/train_rollouts.jsonl'));
  const step2 = train.filter((g) => g.step === 2).flatMap((g) => g.rollouts.map((r) => ({ g, r })));
  assert.equal(step2.length, file.length);
  step2.forEach(({ g, r }, i) => {
    const o = file[i];
    assert.equal(r.response, (o.completion as Array<{ content: string }>)[0].content);
    assert.equal(r.reward, o.reward);
    assert.equal(g.groundTruth, o.answer);
    assert.ok(Math.abs((r.meanLogprob as number) - meanMasked(o)) < 1e-12);
    assert.equal((r as { extra?: Record<string, unknown> }).extra!.correct_answer, o.reward);
    assert.match(g.prompt ?? '', /Answer in \\boxed\{\}\.\n\n/);
  });
  // validation: the score kept aside, not a consensus reward
  for (const g of val) for (const r of g.rollouts) assert.equal(r.reward, null);
  assert.equal(await readRolloutText(train[4].rollouts[1].source as never), train[4].rollouts[1].response);
  assert.equal(await detectLogFile(join(PRL, 'step_1/train_rollouts.jsonl')), 'prime-rl');
  assert.equal(runLabel(join(PRL, 'step_1')), 'outputs');
  const idx = await RunIndex.open(join(FX, 'prime-rl'), { follow: false, onNotice: () => undefined });
  try {
    assert.deepEqual(idx.confidence(), { rollouts: 80, withConfidence: 80, formats: ['prime-rl'], why: null });
  } finally {
    idx.close();
  }
});

test('prime-rl followed: a step file written half-way waits for its last line; the next step appended is read, each group at its full size', async () => {
  const { dir, cleanup } = tempDir();
  const notices: Notice[] = [];
  const s1 = readFileSync(join(PRL, 'step_1/train_rollouts.jsonl'));
  const f1 = join(dir, 'rollouts/step_1/train_rollouts.jsonl');
  mkdirSync(join(dir, 'rollouts/step_1'), { recursive: true });
  const cut = s1.lastIndexOf('\n', s1.length - 2) + 100; // inside the last line
  writeFileSync(f1, s1.subarray(0, cut));
  const idx = await RunIndex.open(dir, { follow: true, poll: true, pollMs: 100, idleMs: 400, onNotice: (n) => notices.push(n) });
  const completed: Array<[number, string, number]> = [];
  idx.onDidChange((e) => {
    for (const k of e.completed) completed.push([idx.group(k)!.step, idx.group(k)!.questionId, idx.group(k)!.n]);
  });
  try {
    await new Promise((r) => setTimeout(r, 1200));
    await idx.settled();
    assert.deepEqual(idx.groups().map((g) => [g.n, g.complete]), [...Array(4).fill([4, false]), [3, false]]);
    appendFileSync(f1, s1.subarray(cut));
    mkdirSync(join(dir, 'rollouts/step_2'));
    writeFileSync(join(dir, 'rollouts/step_2/train_rollouts.jsonl'), readFileSync(join(PRL, 'step_2/train_rollouts.jsonl')));
    await until(() => completed.length === 10);
    await idx.settled();
    assert.deepEqual(completed.sort(), [1, 2].flatMap((s) => [0, 1, 2, 3, 4].map((e) => [s, `default/${e}`, 4])));
    const g = await idx.loadGroup(idx.groups()[4].key);
    assert.match(g.rollouts[3].response, /\\boxed\{/);
    assert.deepEqual(problems(notices), []);
  } finally {
    idx.close();
    cleanup();
  }
});

// ---- slime / miles ----

const SLIME = join(FX, 'slime');

test('slime/miles --dump-details rollout_data/*.pt: never opened, one notice saying how to convert; the converted native log reads as groups', async () => {
  const { groups, notices } = await collect(SLIME);
  const warned = problems(notices);
  assert.equal(warned.length, 1, JSON.stringify(warned));
  assert.match(warned[0].message, /rollout_data\/0\.pt: a slime\/miles --dump-details roll-out file is a PyTorch pickle, which runs code when it is loaded: not read\. .*python -m consensus_lens\.convert slime .*weights_only=True/);
  // what the converter wrote (scripts/make-framework-fixtures.py ran it on the .pt files)
  assert.deepEqual(groups.map((g) => [g.step, g.rollouts.length]), [0, 1].flatMap((s) => Array(3).fill([s, 4])));
  for (const g of groups) {
    assert.ok(g.groundTruth && /^\d+$/.test(g.groundTruth));
    for (const r of g.rollouts) {
      assert.ok(typeof r.meanLogprob === 'number' && r.meanLogprob < 0);
      assert.ok(r.reward === 0 || r.reward === 1);
    }
  }
  // named alone: an error, still never opened
  const alone = await collect(join(SLIME, 'dump/rollout_data/1.pt'));
  assert.deepEqual(alone.groups, []);
  assert.deepEqual(problems(alone.notices).map((n) => n.level), ['error']);
  assert.equal(await detectLogFile(join(SLIME, 'dump/rollout_data/1.pt')), undefined);
  // followed: the same one notice
  const seen: Notice[] = [];
  const idx = await RunIndex.open(join(SLIME, 'dump'), { follow: false, onNotice: (n) => seen.push(n) });
  try {
    assert.equal(idx.groups().length, 0);
    const w = problems(seen);
    assert.equal(w.length, 1, JSON.stringify(w));
    assert.match(w[0].message, /PyTorch pickle.*consensus_lens\.convert slime/);
  } finally {
    idx.close();
  }
});

// ---- miles trajectory ----

const MT = join(FX, 'miles/dump/trajectory');

test('miles trajectory/{id}.jsonl: a group per group_index, the assistant turns after the prompt as the text, reward; eval_{id} the validation stream', async () => {
  const { groups, notices } = await collect(join(FX, 'miles'));
  assert.deepEqual(problems(notices), []);
  const train = groups.filter((g) => !g.stream);
  const val = groups.filter((g) => g.stream === 'validation');
  assert.deepEqual(train.map((g) => [g.run, g.step, g.rollouts.length]), [0, 1].flatMap((s) => Array(3).fill(['dump/trajectory', s, 4])));
  assert.deepEqual(val.map((g) => [g.run, g.step, g.rollouts.length]), Array(3).fill(['dump/trajectory/eval', 1, 4]));
  const file = lines(join(MT, '1.jsonl'));
  const flat = train.filter((g) => g.step === 1).flatMap((g) => g.rollouts.map((r) => ({ g, r })));
  flat.forEach(({ g, r }, i) => {
    const o = file[i];
    const msgs = o.messages as Array<{ role: string; content: string }>;
    assert.equal(r.response, `${msgs[2].content}\n\n${msgs[4].content}`); // the tool's reply is not the policy's
    assert.equal(r.reward, o.reward);
    assert.equal(r.sampleIdx, o.sample_index);
    assert.equal(g.prompt, 'Use the calculator tool.\n\n' + (o.prompt as Array<{ content: string }>)[1].content);
  });
  for (const g of val) for (const r of g.rollouts) assert.equal(r.reward, null);
  assert.equal(await readRolloutText(train[2].rollouts[3].source as never), train[2].rollouts[3].response);
  assert.equal(await detectLogFile(join(MT, 'eval_1.jsonl')), 'miles');
  assert.equal(runLabel(join(MT)), 'dump');
});

test('miles followed: a trajectory file cut mid-line waits; the rest and the next step are read, each group at full size', async () => {
  const { dir, cleanup } = tempDir();
  const notices: Notice[] = [];
  const t0 = readFileSync(join(MT, '0.jsonl'));
  mkdirSync(join(dir, 'trajectory'));
  const f0 = join(dir, 'trajectory/0.jsonl');
  const cut = t0.lastIndexOf('\n', t0.length - 2) + 60;
  writeFileSync(f0, t0.subarray(0, cut));
  const idx = await RunIndex.open(dir, { follow: true, poll: true, pollMs: 100, idleMs: 400, onNotice: (n) => notices.push(n) });
  try {
    await new Promise((r) => setTimeout(r, 1200));
    await idx.settled();
    assert.deepEqual(idx.groups().map((g) => [g.n, g.complete]), [[4, false], [4, false], [3, false]]);
    appendFileSync(f0, t0.subarray(cut));
    writeFileSync(join(dir, 'trajectory/1.jsonl'), readFileSync(join(MT, '1.jsonl')));
    await until(() => idx.groups().length === 6 && idx.groups().every((g) => g.complete));
    await idx.settled();
    assert.deepEqual(idx.groups().map((g) => [g.step, g.n, g.complete]), [0, 1].flatMap((s) => Array(3).fill([s, 4, true])));
    assert.deepEqual(problems(notices), []);
  } finally {
    idx.close();
    cleanup();
  }
});

// ---- Trackio ----

test('Trackio traces, converted by consensus_lens.convert from the database trackio wrote: groups of the traces logged for them (sampled)', async () => {
  const { groups, notices } = await collect(join(FX, 'trackio'));
  assert.deepEqual(problems(notices), []); // the .db is skipped quietly (not a text file)
  // slime logged the first 10 of each batch's 12 samples: the third group holds 2 traces
  assert.deepEqual(groups.map((g) => [g.step, g.rollouts.length]), [0, 1].flatMap((s) => [[s, 4], [s, 4], [s, 2]]));
  for (const g of groups) for (const r of g.rollouts) assert.ok(r.reward === 0 || r.reward === 1);
  assert.match(groups[0].rollouts[0].response, /^Let me compute… \\boxed\{/);
  assert.equal(await detectLogFile(join(FX, 'trackio/db/cl-fixture.db')), undefined);
});

test('SkyRL: no group id is written, so a prompt with fewer samples than the step\'s others is reported (eval_n_samples_per_prompt is not in the dump)', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const src = readFileSync(join(SKY, 'global_step_5_evals/openai_gsm8k.jsonl'), 'utf8').split('\n').filter(Boolean);
    mkdirSync(join(dir, 'dumped_evals/global_step_5_evals'), { recursive: true });
    writeFileSync(join(dir, 'dumped_evals/global_step_5_evals/openai_gsm8k.jsonl'), src.slice(0, -1).join('\n') + '\n'); // the last prompt's 4th sample lost
    const { groups, notices } = await collect(dir);
    assert.deepEqual(groups.map((g) => g.rollouts.length), [4, 4, 3]);
    const w = problems(notices);
    assert.equal(w.length, 1, JSON.stringify(w));
    assert.match(w[0].message, /3 roll-outs.*usual group size is 4/);
  } finally {
    cleanup();
  }
});
