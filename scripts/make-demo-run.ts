// Generates examples/demo-run/: a small native consensus-lens/v1 run (3 steps × 12 questions,
// N = 16–64) from a fixed seed, so the README's main command, the tests and the screenshots all
// see the same data. Re-generate with:  npx tsx scripts/make-demo-run.ts
//
// The questions are archetypes of what a TTRL researcher meets (CoRE paper §6):
//   saturated votes, contested ones, the competence floor, a concentrated error that CoRE
//   overturns, an "empty box" plurality, truncated generations, LaTeX-equivalent answers,
//   multiple choice, a tool-verified minority (T3RL) and a multiple-solution question with outcome
//   checks (MS-TTRL). The run was trained with majority vote (TTRL): each roll-out's logged
//   `reward` is the vote's, except one deliberately wrong reward in step 2 (a reward bug the
//   mismatch check should catch). Ground truth is logged for diagnostics only.
//
// Step 0 is written as group records, step 1 as roll-out records (as a training loop streams
// them), step 2 mixes both across two files.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rng, synthRollouts, type ClassPlan, type SynthRollout } from './synth';

// The operator the run was rewarded with, as the Python reward helpers log it (`extra.operator`):
// the reward-mismatch check is against a named operator, never an assumed one.
const TRAINED_WITH = { operator: 'majority' };
import { extractAnswer } from '../src/engine';

const OUT = 'examples/demo-run';
const r = rng(20261129);

interface Question {
  id: string;
  prompt: string;
  truth: string;
  n: number;
  /** Plans per step (the policy changes as it trains). */
  plans: ClassPlan[][];
  verification?: 'valid' | 'tool';
  toolOutput?: string;
  checks?: { answer: string; passed: number; trials: number }[][];
}

const Q: Question[] = [
  {
    id: 'math500/017',
    prompt: 'What is the sum of the roots of x^2 - 7x + 12 = 0?',
    truth: '7',
    n: 64,
    plans: [
      [{ answer: '7', count: 59, confidence: -0.15, path: 1 }, { answer: '12', count: 5, confidence: -0.7 }],
      [{ answer: '7', count: 62, confidence: -0.12, path: 1 }, { answer: '12', count: 2, confidence: -0.8 }],
      [{ answer: '7', count: 64, confidence: -0.1, path: 1 }],
    ],
  },
  {
    id: 'math500/042',
    prompt: 'Simplify \\sqrt{2}\\cdot\\sqrt{8}.',
    truth: '4',
    n: 32,
    plans: [
      [{ answer: '4', count: 29, confidence: -0.2, path: 2 }, { answer: '', count: 3, confidence: -1.4, path: 9 }],
      [{ answer: '4', count: 30, confidence: -0.18, path: 2 }, { answer: '', count: 2, confidence: -1.5, path: 9 }],
      [{ answer: '4', count: 31, confidence: -0.15, path: 2 }, { answer: '', count: 1, confidence: -1.5, path: 9 }],
    ],
  },
  {
    id: 'amc/2023-12',
    prompt: 'How many positive divisors does 360 have?',
    truth: '24',
    n: 64,
    plans: [
      [{ answer: '24', count: 30, confidence: -0.3, path: 3 }, { answer: '20', count: 18, confidence: -0.6, path: 4 }, { answer: '18', count: 10, confidence: -0.8 }, { answer: null, count: 6 }],
      [{ answer: '24', count: 36, confidence: -0.28, path: 3 }, { answer: '20', count: 20, confidence: -0.6, path: 4 }, { answer: '18', count: 8, confidence: -0.8 }],
      [{ answer: '24', count: 44, confidence: -0.25, path: 3 }, { answer: '20', count: 16, confidence: -0.6, path: 4 }, { answer: null, count: 4 }],
    ],
  },
  {
    // The concentrated error of the CoRE paper: a systematic mistake is the plurality, made by
    // scattered, unsure derivations; the correct minority is coherent and confident.
    id: 'math-l5/113',
    prompt: 'In how many ways can 6 people sit around a round table if two of them refuse to sit together?',
    truth: '72',
    n: 64,
    plans: [
      [{ answer: '48', count: 30, confidence: -0.95 }, { answer: '72', count: 22, confidence: -0.25, path: 5, identical: false }, { answer: '96', count: 12, confidence: -0.9 }],
      [{ answer: '48', count: 28, confidence: -0.95 }, { answer: '72', count: 26, confidence: -0.22, path: 5 }, { answer: '96', count: 10, confidence: -0.9 }],
      [{ answer: '72', count: 34, confidence: -0.2, path: 5 }, { answer: '48', count: 22, confidence: -0.95 }, { answer: '96', count: 8, confidence: -0.9 }],
    ],
  },
  {
    // "Empty box" plurality (degenerate generations): a confidence-weighted vote already recovers.
    id: 'math-l4/088',
    prompt: 'Find the remainder when 2^{100} is divided by 7.',
    truth: '2',
    n: 32,
    plans: [
      [{ answer: '', count: 14, confidence: -2.2, path: 9, identical: true }, { answer: '2', count: 11, confidence: -0.3, path: 6 }, { answer: '4', count: 7, confidence: -0.7 }],
      [{ answer: '', count: 10, confidence: -2.2, path: 9, identical: true }, { answer: '2', count: 16, confidence: -0.28, path: 6 }, { answer: '4', count: 6, confidence: -0.7 }],
      [{ answer: '2', count: 24, confidence: -0.25, path: 6 }, { answer: '', count: 4, confidence: -2.2, path: 9, identical: true }, { answer: '4', count: 4, confidence: -0.7 }],
    ],
  },
  {
    // Competence floor: answers scattered, no coherent cluster.
    id: 'aime/2024-14',
    prompt: 'Find the number of ordered pairs (a, b) of positive integers with a + b <= 100 and gcd(a, b) = ab - 1.',
    truth: '199',
    n: 16,
    plans: [
      ['101', '98', '50', '199', '12', '7', '64', '33', '0', '150', '99', '100', '3', '27', '81', '46'].map((answer) => ({ answer, count: 1, confidence: -1.1 })),
      ['101', '101', '50', '199', '12', '7', '64', '33', '0', '150', '99', '100', '3', '27', '81', '46'].map((answer) => ({ answer, count: 1, confidence: -1.1 })),
      [{ answer: '101', count: 3, confidence: -1 }, ...['50', '199', '12', '7', '64', '33', '0', '150', '99', '100', '3', '27', '81'].map((answer) => ({ answer, count: 1, confidence: -1.1 }))],
    ],
  },
  {
    // Equivalent answers in different notation must form one class (docs/contract.md#answer-equivalence).
    id: 'math500/231',
    prompt: 'What is the probability that a fair coin lands heads?',
    truth: '\\frac{1}{2}',
    n: 32,
    plans: [
      [{ answer: '\\frac{1}{2}', count: 12, confidence: -0.3, path: 7 }, { answer: '0.5', count: 8, confidence: -0.35, path: 7 }, { answer: '\\dfrac12', count: 4, confidence: -0.3, path: 7 }, { answer: '\\frac{1}{3}', count: 8, confidence: -0.9 }],
      [{ answer: '\\frac{1}{2}', count: 16, confidence: -0.3, path: 7 }, { answer: '0.5', count: 8, confidence: -0.35, path: 7 }, { answer: '50\\%', count: 2, confidence: -0.4, path: 7 }, { answer: '\\frac{1}{3}', count: 6, confidence: -0.9 }],
      [{ answer: '\\frac{1}{2}', count: 20, confidence: -0.3, path: 7 }, { answer: '0.5', count: 10, confidence: -0.35, path: 7 }, { answer: '\\frac{1}{3}', count: 2, confidence: -0.9 }],
    ],
  },
  {
    id: 'gpqa/0073',
    prompt: 'Which of the following best explains the observed splitting? (A) ... (B) ... (C) ... (D) ...',
    truth: 'C',
    n: 32,
    plans: [
      [{ answer: 'B', count: 13, confidence: -0.8 }, { answer: 'C', count: 11, confidence: -0.35, path: 8 }, { answer: 'A', count: 5, confidence: -1 }, { answer: 'D', count: 3, confidence: -1 }],
      [{ answer: 'C', count: 14, confidence: -0.33, path: 8 }, { answer: 'B', count: 12, confidence: -0.8 }, { answer: 'A', count: 6, confidence: -1 }],
      [{ answer: 'C', count: 19, confidence: -0.3, path: 8 }, { answer: 'B', count: 10, confidence: -0.8 }, { answer: 'A', count: 3, confidence: -1 }],
    ],
  },
  {
    // T3RL's paper example: a verified minority against an unverified plurality.
    id: 'amc/2022-19',
    prompt: 'How many 3-letter arrangements of the letters of COMBINATORICS are there?',
    truth: '1320',
    n: 16,
    verification: 'tool',
    toolOutput: '1320',
    plans: [
      [{ answer: '1260', count: 11, confidence: -0.5 }, { answer: '1320', count: 5, confidence: -0.45, path: 10 }],
      [{ answer: '1260', count: 9, confidence: -0.5 }, { answer: '1320', count: 7, confidence: -0.4, path: 10 }],
      [{ answer: '1320', count: 10, confidence: -0.35, path: 10 }, { answer: '1260', count: 6, confidence: -0.5 }],
    ],
  },
  {
    // A multiple-solution question (MS-TTRL): several valid outcomes, checked by self-verification.
    id: 'mace/0019',
    prompt: 'Give a prime number between 10 and 30 whose digits sum to an even number.',
    truth: '11',
    n: 32,
    verification: 'valid',
    plans: [
      [{ answer: '11', count: 14, confidence: -0.3, verified: true }, { answer: '13', count: 8, confidence: -0.4, verified: true }, { answer: '15', count: 6, confidence: -0.6 }, { answer: '19', count: 4, confidence: -0.4, verified: true }],
      [{ answer: '11', count: 16, confidence: -0.3, verified: true }, { answer: '13', count: 9, confidence: -0.4, verified: true }, { answer: '15', count: 3, confidence: -0.6 }, { answer: '17', count: 4, confidence: -0.4, verified: true }],
      [{ answer: '11', count: 18, confidence: -0.3, verified: true }, { answer: '13', count: 7, confidence: -0.4, verified: true }, { answer: '17', count: 4, confidence: -0.4, verified: true }, { answer: '19', count: 3, confidence: -0.4, verified: true }],
    ],
    checks: [
      [{ answer: '11', passed: 8, trials: 8 }, { answer: '13', passed: 5, trials: 8 }, { answer: '15', passed: 1, trials: 8 }, { answer: '19', passed: 4, trials: 8 }],
      [{ answer: '13', passed: 7, trials: 8 }, { answer: '17', passed: 6, trials: 8 }],
      [{ answer: '19', passed: 7, trials: 8 }],
    ],
  },
  {
    // Truncated generations: unclosed boxes are "no answer" but still count in N.
    id: 'math-l5/201',
    prompt: 'Evaluate the integral of x e^{x} from 0 to 1.',
    truth: '1',
    n: 16,
    plans: [
      [{ answer: null, count: 7 }, { answer: '1', count: 6, confidence: -0.4, path: 11 }, { answer: 'e-1', count: 3, confidence: -0.7 }],
      [{ answer: null, count: 4 }, { answer: '1', count: 9, confidence: -0.35, path: 11 }, { answer: 'e-1', count: 3, confidence: -0.7 }],
      [{ answer: '1', count: 13, confidence: -0.3, path: 11 }, { answer: 'e-1', count: 2, confidence: -0.7 }, { answer: null, count: 1 }],
    ],
  },
  {
    id: 'math500/305',
    prompt: 'Solve for x: 2x + 4 = 10.',
    truth: '3',
    n: 64,
    plans: [
      [{ answer: '3', count: 40, confidence: -0.2, path: 12 }, { answer: 'x=3', count: 12, confidence: -0.22, path: 12 }, { answer: '7', count: 12, confidence: -0.6 }],
      [{ answer: '3', count: 48, confidence: -0.18, path: 12 }, { answer: 'x = 3', count: 10, confidence: -0.2, path: 12 }, { answer: '7', count: 6, confidence: -0.6 }],
      [{ answer: '3', count: 58, confidence: -0.15, path: 12 }, { answer: '7', count: 6, confidence: -0.6 }],
    ],
  },
];

function rollouts(q: Question, step: number): (SynthRollout & Record<string, unknown>)[] {
  const plan = q.plans[step];
  const total = plan.reduce((s, c) => s + c.count, 0);
  if (total !== q.n) throw new Error(`${q.id} step ${step}: plan has ${total} roll-outs, not ${q.n}`);
  const list = synthRollouts(r, plan, { bytes: 350 + Math.floor(r() * 250), withVerification: q.verification === 'valid' }) as (SynthRollout & Record<string, unknown>)[];
  if (q.verification === 'tool') {
    for (const ro of list) {
      const boxed = extractAnswer(ro.response);
      ro.verification = { tool_output: boxed === '1320' ? '1320' : String(Number(q.toolOutput) - 60 + Math.floor(r() * 3)) };
    }
  }
  return list;
}

/** The vote's rewards (the run was configured with majority), by exact answer string, as TTRL's
 * own reward code would have done it before our equivalence: "0.5" and "\frac{1}{2}" differ there.
 * (That is itself a finding the mismatch check surfaces.) */
function voteRewards(list: SynthRollout[]): number[] {
  const answers = list.map((ro) => extractAnswer(ro.response));
  const counts = new Map<string, number>();
  for (const a of answers) if (a !== null) counts.set(a, (counts.get(a) ?? 0) + 1);
  let best: string | null = null;
  for (const a of answers) if (a !== null && (best === null || counts.get(a)! > counts.get(best)!)) best = a;
  return answers.map((a) => (a !== null && a === best ? 1 : 0));
}

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
const files = new Map<string, string[]>();
const emit = (file: string, record: unknown) => {
  if (!files.has(file)) files.set(file, []);
  files.get(file)!.push(JSON.stringify(record));
};

for (let step = 0; step < 3; step++) {
  for (const [k, q] of Q.entries()) {
    const list = rollouts(q, step);
    const rewards = voteRewards(list);
    list.forEach((ro, i) => (ro.reward = rewards[i]));
    if (step === 2 && q.id === 'math500/305') list[list.length - 1].reward = 1 - (list[list.length - 1].reward as number); // the reward bug
    const checks = q.checks?.[step];
    if (step === 0 || (step === 2 && k % 2 === 0)) {
      const rec: Record<string, unknown> = { kind: 'group', step, question_id: q.id, prompt: q.prompt, ground_truth: q.truth, rollouts: list, extra: TRAINED_WITH };
      if (checks) rec.outcome_checks = checks;
      emit(step === 0 ? 'step-000.jsonl' : 'step-002-groups.jsonl', rec);
    } else {
      if (checks) {
        // Roll-out records cannot carry outcome checks: those go in a group record of their own.
        emit(step === 1 ? 'step-001.jsonl' : 'step-002-rollouts.jsonl', { kind: 'group', step, question_id: q.id, prompt: q.prompt, ground_truth: q.truth, rollouts: list, outcome_checks: checks, extra: TRAINED_WITH });
        continue;
      }
      for (const ro of list) emit(step === 1 ? 'step-001.jsonl' : 'step-002-rollouts.jsonl', { kind: 'rollout', step, question_id: q.id, prompt: q.prompt, ground_truth: q.truth, ...ro, extra: TRAINED_WITH });
    }
  }
}
for (const [name, lines] of files) writeFileSync(join(OUT, name), lines.join('\n') + '\n');
console.log(`wrote ${files.size} files to ${OUT}`);
