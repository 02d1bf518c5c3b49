// A group's per-question features, computed once and reused by every operator and every what-if
// (κ/τ/α sweeps re-run only the dynamics): extracted answers, answer classes (§3), confidences,
// T3RL verification flags and the within-class reasoning cosines (§4.3 step 1). Response texts are
// not kept: a run index can drop them and read a roll-out back from disk when a user asks.

import type { Framework, Group, OutcomeCheck, RecordSource } from './types';
import { answersEqual, extractAnswer, formClasses, type AnswerClass } from './answers/answers';
import { cosinesByClass, tfidfRows } from './features/tfidf';
import { rolloutTextStats, type RolloutTextStats } from './features/text-stats';
import { noveltyFeatures, type NoveltyFeatures } from './features/novelty-features';
import { argmaxFirst } from './argmax';

export interface PreparedGroup {
  run?: string;
  /** 'validation': a validation dump (rewards against the real answer, not consensus rewards). */
  stream?: 'validation';
  /** The operator the training loop logged for the group (Group.loggedOperator). */
  loggedOperator?: string;
  step: number;
  questionId: string;
  n: number;
  /** Extracted (or logged) answer per roll-out; null = no answer. */
  answers: (string | null)[];
  /** Class index per roll-out (-1 for no answer); classes are ordered by first member. */
  classOf: Int32Array;
  classes: AnswerClass[];
  /** Per class, cos(h_i, h_j) over its member pairs, packed as in `cosinesWithin`; empty when
   * prepared without reasoning vectors (`hasReasoning` false). */
  cosines: Float64Array[];
  hasReasoning: boolean;
  /** c_i, the mean token log-prob; meaningful only where `hasConfidence[i]`. */
  confidence: Float64Array;
  hasConfidence: Uint8Array;
  /** Number of roll-outs without a finite confidence (CoRE then runs as EC, docs/contract.md#ec-and-core, step 3). */
  confidenceMissing: number;
  /**
   * The label-free confidences per roll-out, as logged (Rollout.selfCertainty, entropy,
   * tokenEntropies; null: not logged). Kept raw, NaN and ∞ included, so the confidence operators
   * can refuse them by name; present only when some roll-out logs one.
   */
  selfCertainty?: (number | null)[];
  entropy?: (number | null)[];
  tokenEntropies?: (readonly number[] | null)[];
  /** Rollout.confidenceApproximate per roll-out; present only when some roll-out says true. */
  confidenceApproximate?: boolean[];
  /** The novelty vote's validity flags and raw novelty (docs/contract.md#novelty); computed with the reasoning vectors. */
  novelty?: NoveltyFeatures;
  /** Roll-outs whose logged mean log-prob (or a token log-prob) is NaN or ±∞; present only when some are. */
  nonFiniteLogprob?: number[];
  /** T3RL v_i: 1 verified, 0 not, -1 nothing logged (docs/contract.md#t3rl). */
  verified: Int8Array;
  /** The reward the training loop used, per roll-out, when logged. */
  loggedRewards: (number | null)[];
  /** The advantage the trainer logged, per roll-out, when the log has any. */
  loggedAdvantages?: (number | null)[];
  /** The trainer that wrote the log, when its format tells (the GRPO view's default formula). */
  framework?: Framework;
  outcomeChecks: OutcomeCheck[];
  /** Diagnostics only. */
  groundTruth: string | null;
  /** Every accepted form of the ground truth, when the log holds several (Group.groundTruthForms). */
  groundTruthForms?: string[];
  /** Group.truthMayBeVote. */
  truthMayBeVote?: boolean;
  sources: (RecordSource | undefined)[];
  /** Run health (docs/health.md): length, answer rule, truncation and repetition per roll-out;
   * present only when prepared with `health: true` (they need the texts, which are not kept). */
  text?: RolloutTextStats;
}

export interface PrepareOptions {
  /** docs/contract.md#answer-extraction: fall back to the last number of a response without a box (default true). */
  lastNumber?: boolean;
  /** Compute the reasoning vectors (TF-IDF, within-class cosines; default true). Only EC and
   * CoRE need them: a majority-vote reward worker skips the costliest step. */
  reasoning?: boolean;
  /** Compute the per-roll-out text measures of the run-health analysis (default false). */
  health?: boolean;
  /** Groups with more roll-outs than this are refused (GroupTooLargeError; default
   * DEFAULT_MAX_GROUP_SIZE). */
  maxGroupSize?: number;
}

/**
 * The largest group scored by default. Real groups have N ≤ 1,024 roll-outs; the within-class
 * cosines grow with N² (one class of N = 10,000 holds 50 M pairs), so a larger group is reported
 * and skipped rather than allowed to exhaust memory. Raised with `--max-group-size` (CLI) or
 * `consensusLens.maxGroupSize` (extension).
 */
export const DEFAULT_MAX_GROUP_SIZE = 4096;

export class GroupTooLargeError extends Error {
  constructor(
    readonly size: number,
    readonly limit: number,
    group: Pick<Group, 'step' | 'questionId'>,
  ) {
    super(`step ${group.step}, question ${group.questionId}: ${size} roll-outs, more than the group size limit of ${limit} (--max-group-size, consensusLens.maxGroupSize); not scored`);
  }
}

/** Throws GroupTooLargeError when the group has more roll-outs than `limit`. */
export function checkGroupSize(group: Group, limit: number = DEFAULT_MAX_GROUP_SIZE): void {
  if (group.rollouts.length > limit) throw new GroupTooLargeError(group.rollouts.length, limit, group);
}

/** Whether each roll-out is in the vote's class (the largest, ties to the first: docs/contract.md#majority). */
function voteMembers(classOf: Int32Array, classes: readonly AnswerClass[]): Uint8Array {
  const top = argmaxFirst(classes.map((c) => c.members.length));
  return Uint8Array.from(classOf, (c) => (top >= 0 && c === top ? 1 : 0));
}

/** A group's answers and answer classes (docs/contract.md#answers): the first step of `prepareGroup`. */
export interface GroupAnswers {
  answers: (string | null)[];
  classOf: Int32Array;
  classes: AnswerClass[];
}

export function groupAnswers(group: Group, opts: PrepareOptions = {}): GroupAnswers {
  const answers = group.rollouts.map((r) =>
    r.answer !== undefined && r.answer !== null ? r.answer : extractAnswer(r.response ?? '', { lastNumber: opts.lastNumber ?? true }),
  );
  return { answers, ...formClasses(answers) };
}

/**
 * The reasoning cosines of docs/contract.md#ec-and-core, step 1: the TF-IDF rows of the texts, then per class the
 * cosines of its members' pairs (packed as in `cosinesWithin`). Depends on nothing but the texts
 * and the classes' members, so it can run on another thread (`score`'s worker threads do).
 */
export function reasoningCosines(texts: readonly string[], members: readonly (readonly number[])[]): Float64Array[] {
  return cosinesByClass(tfidfRows(texts), members);
}

/**
 * `done` holds steps already computed for this group (its answers, and the reasoning cosines of
 * those answers' classes, from `reasoningCosines`); the rest is computed here.
 */
export function prepareGroup(group: Group, opts: PrepareOptions = {}, done: { answers?: GroupAnswers; cosines?: Float64Array[]; novelty?: NoveltyFeatures } = {}): PreparedGroup {
  checkGroupSize(group, opts.maxGroupSize);
  const rollouts = group.rollouts;
  const n = rollouts.length;
  const { answers, classOf, classes } = done.answers ?? groupAnswers(group, opts);
  const hasReasoning = opts.reasoning ?? true;
  let cosines: Float64Array[] = [];
  if (hasReasoning)
    cosines = done.cosines ?? reasoningCosines(
      rollouts.map((r) => r.response ?? ''),
      classes.map((c) => c.members),
    );

  const confidence = new Float64Array(n);
  const hasConfidence = new Uint8Array(n);
  let confidenceMissing = 0;
  for (let i = 0; i < n; i++) {
    const c = rollouts[i].meanLogprob;
    if (typeof c === 'number' && Number.isFinite(c)) {
      confidence[i] = c;
      hasConfidence[i] = 1;
    } else confidenceMissing++;
  }

  const verified = new Int8Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const v = rollouts[i].verification;
    if (!v) continue;
    if (typeof v.valid === 'boolean') verified[i] = v.valid ? 1 : 0;
    else if (typeof v.toolOutput === 'string') {
      const a = answers[i];
      verified[i] = a !== null && answersEqual(v.toolOutput, a) ? 1 : 0;
    }
  }

  const prepared: PreparedGroup = {
    run: group.run,
    step: group.step,
    questionId: group.questionId,
    n,
    answers,
    classOf,
    classes,
    cosines,
    hasReasoning,
    confidence,
    hasConfidence,
    confidenceMissing,
    verified,
    loggedRewards: rollouts.map((r) => (typeof r.reward === 'number' && Number.isFinite(r.reward) ? r.reward : null)),
    outcomeChecks: group.outcomeChecks ?? [],
    groundTruth: group.groundTruth ?? null,
    sources: rollouts.map((r) => r.source),
  };
  if (group.stream) prepared.stream = group.stream;
  if (group.framework) prepared.framework = group.framework;
  if (group.groundTruthForms?.length) prepared.groundTruthForms = group.groundTruthForms;
  if (group.truthMayBeVote) prepared.truthMayBeVote = true;
  if (rollouts.some((r) => typeof r.advantage === 'number')) {
    prepared.loggedAdvantages = rollouts.map((r) => (typeof r.advantage === 'number' && Number.isFinite(r.advantage) ? r.advantage : null));
  }
  if (group.loggedOperator) prepared.loggedOperator = group.loggedOperator;
  if (rollouts.some((r) => r.selfCertainty !== undefined && r.selfCertainty !== null)) prepared.selfCertainty = rollouts.map((r) => (typeof r.selfCertainty === 'number' ? r.selfCertainty : null));
  if (rollouts.some((r) => r.entropy !== undefined && r.entropy !== null)) prepared.entropy = rollouts.map((r) => (typeof r.entropy === 'number' ? r.entropy : null));
  if (rollouts.some((r) => Array.isArray(r.tokenEntropies))) prepared.tokenEntropies = rollouts.map((r) => (Array.isArray(r.tokenEntropies) ? r.tokenEntropies : null));
  if (rollouts.some((r) => r.confidenceApproximate === true)) prepared.confidenceApproximate = rollouts.map((r) => r.confidenceApproximate === true);
  const nonFinite = rollouts.flatMap((r, i) => (typeof r.meanLogprob === 'number' && !Number.isFinite(r.meanLogprob) ? [i] : []));
  if (nonFinite.length) prepared.nonFiniteLogprob = nonFinite;
  if (hasReasoning) prepared.novelty = done.novelty ?? noveltyFeatures(rollouts.map((r) => r.response ?? ''), voteMembers(classOf, classes));
  if (opts.health)
    prepared.text = rolloutTextStats(
      rollouts.map((r) => r.response ?? ''),
      answers,
      rollouts.map((r) => r.answer !== undefined && r.answer !== null),
    );
  return prepared;
}
