// Seeded synthetic training runs with known injected faults, for the run-health tests: a
// stationary run, a format collapse at a known step, an answer-entropy collapse, a ground-truth
// leak, inverted and {−1, 1} rewards, uninformative and misleading confidences, and questions
// whose plurality is a degenerate (empty-box, repetition-collapsed) cluster.
import type { Group } from '../../src/engine';
import { reasoning, rng } from '../../scripts/synth';

export interface RunFaults {
  /** From this step on the model stops boxing ("The answer is X.") and the logged reward is the format penalty 0. */
  formatCollapseAt?: number;
  /** From this step on every roll-out gives the same answer. */
  entropyCollapseAt?: number;
  /** Logged reward = [answer ≡ ground truth]. */
  groundTruthLeak?: boolean;
  /** Logged reward = 1 − the vote's reward. */
  inverted?: boolean;
  /** Logged reward = 2R − 1 ({−1, 1}). */
  scaled?: boolean;
  /** Confidence: correct roll-outs more confident (default), equally, or less. */
  confidence?: 'informative' | 'uninformative' | 'misleading' | 'none';
  /** Share of questions whose plurality is an empty, repetition-collapsed cluster. */
  degeneratePluralities?: number;
  /** No ground truth in the log. */
  noTruth?: boolean;
  /** No logged rewards. */
  noRewards?: boolean;
}

export interface RunShape {
  steps: number;
  questions: number;
  n: number;
  /** Probability that a roll-out is correct. */
  accuracy: number;
  seed: number;
}

const DISTRACTORS = ['17', '23', '31'];

function gauss(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

/** The vote with the tie rule of docs/contract.md#tie-rule: among the most frequent answers, the one seen first. */
function mode(xs: string[]): string | null {
  const count = new Map<string, number>();
  for (const x of xs) count.set(x, (count.get(x) ?? 0) + 1);
  let best: string | null = null;
  let bestN = 0;
  for (const [x, k] of count) if (k > bestN) ((best = x), (bestN = k));
  return best;
}

export function makeRun(shape: RunShape, faults: RunFaults = {}): Group[] {
  const r = rng(shape.seed);
  const groups: Group[] = [];
  const conf = faults.confidence ?? 'informative';
  for (let step = 0; step < shape.steps; step++) {
    for (let q = 0; q < shape.questions; q++) {
      const truth = String(40 + q);
      const collapsed = faults.entropyCollapseAt !== undefined && step >= faults.entropyCollapseAt;
      const unboxed = faults.formatCollapseAt !== undefined && step >= faults.formatCollapseAt;
      const degenerate = faults.degeneratePluralities !== undefined && r() < faults.degeneratePluralities;
      const answers: string[] = [];
      const texts: string[] = [];
      for (let i = 0; i < shape.n; i++) {
        let a: string;
        if (collapsed) a = truth;
        else if (degenerate) a = i < Math.ceil(shape.n * 0.5) ? '' : i < Math.ceil(shape.n * 0.5) + Math.floor(shape.n * 0.3) ? truth : DISTRACTORS[i % 3];
        else a = r() < shape.accuracy ? truth : DISTRACTORS[Math.floor(r() * DISTRACTORS.length)];
        answers.push(a);
        const body = reasoning(r, 300 + Math.floor(r() * 300), a === truth ? 0 : 1 + DISTRACTORS.indexOf(a));
        if (a === '') texts.push(body.slice(0, 80) + ' Wait, let me check this again. '.repeat(12) + '\\boxed{}');
        else texts.push(unboxed ? `${body}\nThe answer is ${a}.` : `${body}\nSo the result is $\\boxed{${a}}$.`);
      }
      const vote = mode(answers);
      const rollouts = answers.map((a, i) => {
        const correct = a === truth;
        let c: number | null = null;
        if (conf !== 'none') {
          const shift = conf === 'informative' ? (correct ? 0.25 : 0) : conf === 'misleading' ? (correct ? 0 : 0.25) : 0;
          c = -0.5 + shift + 0.08 * gauss(r) + (a === '' ? -0.4 : 0);
        }
        const R = vote !== null && a === vote ? 1 : 0;
        let reward: number | null = R;
        if (unboxed) reward = 0;
        else if (faults.groundTruthLeak) reward = correct ? 1 : 0;
        else if (faults.inverted) reward = 1 - R;
        else if (faults.scaled) reward = 2 * R - 1;
        if (faults.noRewards) reward = null;
        return { response: texts[i], meanLogprob: c, reward, sampleIdx: i };
      });
      // trained with the vote, as the reward helpers log it: the reward checks are against a named operator
      groups.push({ step, questionId: `q${q}`, groundTruth: faults.noTruth ? null : truth, rollouts, loggedOperator: 'majority' });
    }
  }
  return groups;
}
