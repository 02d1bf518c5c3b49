// MS-TTRL (docs/contract.md#ms-ttrl): outcome-level self-verification, a three-state cache per
// (question, outcome) across steps, and confidence-gated inverse-probability scaling.

import type { PreparedGroup } from '../prepare';
import type { OutcomeCheck } from '../types';
import type { Params } from '../params';
import { answersEqual } from '../answers/answers';
import { gateOneResult, type OperatorResult } from './result';

type State = 'correct' | 'candidate' | 'wrong';

interface CachedOutcome {
  answer: string;
  state: State;
  passRate: number;
  step: number;
}

/**
 * The run-wide outcome cache. Groups are applied in the order they are scored, which for a
 * training log is step order; a resolved state (Correct/Wrong) is kept and never re-judged, a
 * Candidate takes its latest pass rate. One cache per threshold setting, since τ_low/τ_high decide
 * what gets resolved.
 */
export class OutcomeCache {
  private readonly byQuestion = new Map<string, CachedOutcome[]>();
  constructor(
    readonly tauLow: number,
    readonly tauHigh: number,
  ) {}

  outcomes(questionId: string): CachedOutcome[] {
    let list = this.byQuestion.get(questionId);
    if (!list) this.byQuestion.set(questionId, (list = []));
    return list;
  }

  has(questionId: string): boolean {
    return (this.byQuestion.get(questionId)?.length ?? 0) > 0;
  }

  /** A question's entries as one string: equal strings, the same MS-TTRL for a group of it. */
  fingerprint(questionId: string): string {
    return JSON.stringify(this.byQuestion.get(questionId) ?? []);
  }
}

/** What a group tells the outcome cache: its question, its step, its classes' answers (in class order) and its checks. */
export interface OutcomeReplay {
  questionId: string;
  step: number;
  answers: string[];
  checks: OutcomeCheck[];
}

export function outcomeReplay(g: PreparedGroup): OutcomeReplay {
  return { questionId: g.questionId, step: g.step, answers: g.classes.map((c) => c.answer), checks: g.outcomeChecks };
}

/**
 * Each class's outcome, the cache updated with the group's checks (the cache rule of
 * docs/contract.md#ms-ttrl). Applying a group twice leaves the cache as once: a resolved state
 * stays, a Candidate takes the same pass rate again.
 */
export function judgeOutcomes(cache: OutcomeCache, g: OutcomeReplay, p: Params): { state: State; passRate: number; checked: boolean }[] {
  const cached = cache.outcomes(g.questionId);
  return g.answers.map((answer) => {
    let entry = cached.find((o) => o.answer === answer) ?? cached.find((o) => answersEqual(o.answer, answer));
    if (entry && entry.state !== 'candidate') return { state: entry.state, passRate: entry.passRate, checked: true };
    const check = g.checks.find((o) => o.trials > 0 && answersEqual(o.answer, answer));
    if (check) {
      const passRate = check.passed / check.trials;
      const state = judge(passRate, p);
      if (entry) Object.assign(entry, { state, passRate, step: g.step });
      else cached.push((entry = { answer, state, passRate, step: g.step }));
      return { state, passRate, checked: true };
    }
    if (entry) return { state: entry.state, passRate: entry.passRate, checked: true };
    return { state: 'candidate' as State, passRate: p.uncheckedPassRate, checked: false };
  });
}

export function msttrlUnavailable(g: PreparedGroup, cache: OutcomeCache | undefined): string | null {
  if (g.outcomeChecks.length > 0) return null;
  if (cache?.has(g.questionId)) return null;
  return 'no outcome_checks logged for this question yet';
}

function judge(passRate: number, p: Params): State {
  if (passRate >= p.tauHigh) return 'correct';
  if (passRate < p.tauLow) return 'wrong';
  return 'candidate';
}

export function msttrl(g: PreparedGroup, p: Params, cache: OutcomeCache = new OutcomeCache(p.tauLow, p.tauHigh)): OperatorResult {
  const outcomes = judgeOutcomes(cache, outcomeReplay(g), p);

  // Rewards: Correct (1/f)^(1−λ) with f = class size / N; Candidate p; Wrong and no answer 0.
  const rewards = new Float64Array(g.n);
  g.classes.forEach((c, k) => {
    const o = outcomes[k];
    const value = o.state === 'correct' ? (g.n / c.members.length) ** (1 - p.lambda) : o.state === 'candidate' ? o.passRate : 0;
    for (const i of c.members) rewards[i] = value;
  });

  // Label: the Correct outcome with the highest pass rate; ties to the larger class, then the
  // tie rule (classes are in first-member order, so the first best stays).
  let labelClass = -1;
  g.classes.forEach((c, k) => {
    if (outcomes[k].state !== 'correct') return;
    if (labelClass < 0) return void (labelClass = k);
    const best = outcomes[labelClass].passRate;
    const pr = outcomes[k].passRate;
    if (pr > best || (pr === best && c.members.length > g.classes[labelClass].members.length)) labelClass = k;
  });
  return {
    ...gateOneResult(
      'msttrl',
      g,
      labelClass,
      rewards,
      Float64Array.from(outcomes, (o) => o.passRate),
      p,
    ),
    outcomes,
  };
}
