// Writes small real-format fixtures for trying the framework adapters by hand
// (`consensus-lens report test/fixtures/logs/trl`, `... test/fixtures/logs/verl`):
//   test/fixtures/logs/trl/completions/completions_0000{1,2}.parquet  — TRL GRPOTrainer's completions
//     table (step as a string, prompt, completion, one column per reward function, advantage),
//     written with hyparquet-writer configured as pandas + pyarrow write (pyarrow-like-parquet.mjs);
//     2 steps × 3 prompts × 8 completions. (scripts/make-log-fixtures.py writes the real-writer set.)
//   test/fixtures/logs/verl/rollout/{1,2}.jsonl — verl rollout_data_dir dumps (input, output, gts,
//     score, step, reward extra keys acc/pred, uid), lines shuffled as verl's balancing leaves them.
// Deterministic (seeded); re-run with `node scripts/make-trl-fixture.mjs` after changing it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pandasToParquet } from './pyarrow-like-parquet.mjs';

const root = 'test/fixtures/logs';
let seed = 12345;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const questions = [
  { prompt: 'What is 7 * 8?', truth: '56', wrong: ['54', '58'] },
  { prompt: 'Simplify 6/8.', truth: '\\frac{3}{4}', wrong: ['0.7', '\\frac{2}{3}'] },
  { prompt: 'How many primes are below 20?', truth: '8', wrong: ['7', '9'] },
];
const N = 8;

function completion(q, i, step) {
  const p = 0.45 + 0.15 * step;
  const a = rnd() < p ? q.truth : q.wrong[Math.floor(rnd() * q.wrong.length)];
  const variant = i % 3 === 0 ? `Let me compute carefully. The result is \\boxed{${a}}.` : `Working step by step for "${q.prompt}" gives ${a}, so the answer is \\boxed{${a}}.`;
  return { text: variant, answer: a };
}

mkdirSync(join(root, 'trl', 'completions'), { recursive: true });
for (const step of [1, 2]) {
  const rows = [];
  for (const q of questions) for (let i = 0; i < N; i++) rows.push({ q, ...completion(q, i, step) });
  const acc = rows.map((r) => (r.answer === r.q.truth ? 1 : 0));
  const fmt = rows.map((r) => (r.text.includes('\\boxed{') ? 0.5 : 0));
  const adv = rows.map((_, k) => {
    const g = Math.floor(k / N) * N;
    const rs = rows.slice(g, g + N).map((_, j) => acc[g + j] + fmt[g + j]);
    const mean = rs.reduce((s, x) => s + x, 0) / N;
    const std = Math.sqrt(rs.reduce((s, x) => s + (x - mean) ** 2, 0) / (N - 1));
    return (acc[k] + fmt[k] - mean) / (std + 1e-4);
  });
  const buf = pandasToParquet({
    step: rows.map(() => String(step)),
    prompt: rows.map((r) => r.q.prompt),
    completion: rows.map((r) => r.text),
    accuracy_reward: acc,
    format_reward: fmt,
    advantage: adv,
  });
  writeFileSync(join(root, 'trl', 'completions', `completions_${String(step).padStart(5, '0')}.parquet`), buf);
}

mkdirSync(join(root, 'verl', 'rollout'), { recursive: true });
for (const step of [1, 2]) {
  const lines = [];
  questions.forEach((q, qi) => {
    const uid = `${(0x1000 + qi * 7 + step).toString(16)}-fixture-uuid`;
    for (let i = 0; i < N; i++) {
      const c = completion(q, i, step);
      lines.push({ input: q.prompt, output: c.text, gts: q.truth, score: c.answer === q.truth ? 1.0 : 0.0, step, acc: c.answer === q.truth, pred: c.answer, uid });
    }
  });
  for (let i = lines.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [lines[i], lines[j]] = [lines[j], lines[i]];
  }
  writeFileSync(join(root, 'verl', 'rollout', `${step}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}
console.log(`wrote ${root}/trl and ${root}/verl`);
