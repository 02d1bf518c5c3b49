// Shared types of the log layer (src/logs). See src/logs/log-layer.ts for the overview.
import type { Framework, OutcomeCheck, RecordSource, Rollout, Verification } from '../engine';

/** A message about the run for the user: one line, naming the file and line when there is one. */
export interface Notice {
  level: 'info' | 'warning' | 'error';
  message: string;
  file?: string;
  line?: number;
}
export type NoticeSink = (n: Notice) => void;

/** The formats the log layer reads (docs/contract.md#log-formats), detected by content. */
export type LogFormat = 'native' | 'verl' | 'trl' | 'nemo-rl' | 'wandb' | 'prime-rl' | 'skyrl' | 'miles';

/**
 * Where a roll-out's record lives. For a roll-out inside a native group record, `item` is its index
 * in the record's `rollouts` array (the line holds the whole group). For a TRL parquet file, `line`
 * is the 1-based row and `offset`/`length` are 0 (the text is read back by row).
 */
export interface RolloutSource extends RecordSource {
  item?: number;
}

/** One roll-out as the index keeps it: the numbers the engine needs, never the text. */
export interface RolloutEntry {
  meanLogprob: number | null;
  reward: number | null;
  /** Pre-extracted answer when the log has one (native `answer`); else null (extracted from text). */
  answer: string | null;
  verification: Verification | null;
  sampleIdx: number | null;
  source: RolloutSource;
  /** Format-specific extras (verl reward extra-info keys, TRL per-reward-function columns). */
  extra?: Record<string, unknown>;
  /** The label-free confidences when logged (docs/contract.md#label-free-operators). */
  confidences?: RolloutConfidences;
}

/** A roll-out's logged self-certainty, entropy, token entropies and whether they are approximate. */
export type RolloutConfidences = Pick<Rollout, 'selfCertainty' | 'entropy' | 'tokenEntropies' | 'confidenceApproximate'>;

/** The confidences a roll-out carries, or undefined when it has none. */
export function confidencesOf(r: Rollout): RolloutConfidences | undefined {
  const c: RolloutConfidences = {};
  if (r.selfCertainty !== undefined) c.selfCertainty = r.selfCertainty;
  if (r.entropy !== undefined) c.entropy = r.entropy;
  if (r.tokenEntropies !== undefined) c.tokenEntropies = r.tokenEntropies;
  if (r.confidenceApproximate) c.confidenceApproximate = true;
  return Object.keys(c).length ? c : undefined;
}

/** A group's identity: JSON of [run, step, questionId]; build with `groupKey`. */
export type GroupKey = string;

export function groupKey(run: string | undefined, step: number, questionId: string): GroupKey {
  return JSON.stringify([run ?? '', step, questionId]);
}

/**
 * A parsed record, before it is merged into a group. Texts are present, except from
 * JsonlFileParser.lineBytes (the run index, which keeps no text): there a roll-out's text is "".
 */
export type ParsedRecord =
  | {
      kind: 'group';
      run?: string;
      step: number;
      questionId: string;
      prompt?: string;
      groundTruth?: string | null;
      /** Every accepted form of the ground truth when the log holds several (verl `gts` lists). */
      groundTruthForms?: string[];
      /** 'validation': a validation dump (rewards against the real answer, not consensus rewards). */
      stream?: 'validation';
      /** The trainer that wrote the log, when its format tells. */
      framework?: Framework;
      outcomeChecks?: OutcomeCheck[];
      /** The operator the training loop logged for the group (`extra.operator`). */
      loggedOperator?: string;
      rollouts: Array<Rollout & { extra?: Record<string, unknown> }>;
      source: RecordSource;
    }
  | {
      kind: 'rollout';
      run?: string;
      step: number;
      questionId: string;
      prompt?: string;
      groundTruth?: string | null;
      groundTruthForms?: string[];
      stream?: 'validation';
      framework?: Framework;
      rollout: Rollout & { extra?: Record<string, unknown> };
      /** The operator the training loop logged (`extra.operator` of the record). */
      loggedOperator?: string;
      /**
       * A turn of a multi-turn session (verl V1 uid `{uuid}_{session}_{output}`): only the session's
       * final output is a roll-out, so a later output of the same session replaces an earlier one.
       */
      turn?: { session: string; output: number };
      source: RecordSource;
    };
