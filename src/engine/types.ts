// The engine's input: one group (the N roll-outs of one question at one step), in the shape of
// docs/contract.md#native-format after parsing. Field names are camelCase here; the log readers map the wire names.

/** Where a roll-out's record lives on disk, so its text can be read back on demand. */
export interface RecordSource {
  file: string;
  /** 1-based line number of the record. */
  line: number;
  /** Byte offset and length of the record's line (without the newline). */
  offset: number;
  length: number;
}

export interface Verification {
  /** T3RL: the tool's verdict when logged. */
  valid?: boolean | null;
  /** T3RL: the tool's output, compared with the roll-out's answer by §3.2 when `valid` is absent. */
  toolOutput?: string | null;
}

export interface Rollout {
  response: string;
  /** Pre-extracted answer; when absent (undefined or null) it is extracted from `response`. */
  answer?: string | null;
  /** Mean token log-probability (natural log): CoRE's confidence c_i. */
  meanLogprob?: number | null;
  /**
   * INTUITOR's self-certainty of the response (wire `self_certainty`): the mean over its tokens of
   * KL(uniform ‖ π) = logsumexp(z) − mean(z) of the full-vocabulary logits z (docs/contract.md#self-certainty).
   */
  selfCertainty?: number;
  /** The mean token entropy over the response's tokens (wire `entropy`, docs/contract.md#token-entropy). */
  entropy?: number;
  /** The entropy of each response token's distribution, in order (wire `token_entropies`). */
  tokenEntropies?: readonly number[];
  /**
   * true: `selfCertainty`, `entropy` and `tokenEntropies` were computed from the sampled tokens'
   * log-probs (or a top-k of them), not the full-vocabulary logits: an approximation, shown as
   * such (wire `confidence_approximate`).
   */
  confidenceApproximate?: boolean;
  /** The reward the training loop actually used (for the mismatch check of docs/contract.md#grpo-view). */
  reward?: number | null;
  /** The advantage the trainer logged for this roll-out (TRL's completions `advantage` column). */
  advantage?: number | null;
  verification?: Verification | null;
  sampleIdx?: number | null;
  source?: RecordSource;
}

export interface OutcomeCheck {
  answer: string;
  passed: number;
  trials: number;
}

export interface Group {
  run?: string;
  step: number;
  questionId: string;
  prompt?: string;
  /** Diagnostics only: never an input to any operator. */
  groundTruth?: string | null;
  /** Diagnostics only: every accepted form of the ground truth when the log holds several; a label equal to any is correct. */
  groundTruthForms?: string[];
  /**
   * The logged ground truth is a framework field that a TTRL-style trainer may overwrite with its
   * own vote (verl `gts`, with nothing in the dump saying otherwise): `--ground-truth auto` checks
   * it against the vote (docs/contract.md#ground-truth).
   */
  truthMayBeVote?: boolean;
  /** 'validation': a validation dump (its logged rewards are against the real answer, not consensus rewards). */
  stream?: 'validation';
  rollouts: Rollout[];
  /** MS-TTRL outcome self-verification results (docs/contract.md#ms-ttrl). */
  outcomeChecks?: OutcomeCheck[];
  /** The trainer that wrote the log, when its format tells: the GRPO view defaults to its advantage formula. */
  framework?: Framework;
  /**
   * The operator the training loop rewarded this group with, as its log records it (native
   * `extra.operator`, written by the Python reward helpers): the configured operator of the
   * reward-mismatch check unless the user names another.
   */
  loggedOperator?: string;
}

/** Trainers whose GRPO advantage formula the GRPO view knows (docs/training-loop.md, "Advantages"). */
export type Framework = 'trl' | 'verl' | 'nemo-rl';
