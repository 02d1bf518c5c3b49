// The label-free confidences a log may carry per roll-out (docs/log-formats.md, "Self-certainty and
// token entropy"): self-certainty, mean token entropy, each token's entropy, and whether they are an
// approximation. Real values come from a trainer's forward pass over the full-vocabulary logits
// (the Python hooks: consensus_lens.trl's confidence_trainer, consensus_lens.verl's entropies); a
// format that carries only the sampled tokens' log-probs gives at most an approximation — each
// token's surprisal −log π(y_t), a one-sample estimate of its entropy — which is marked
// `confidenceApproximate` and never stands in for a real value. Self-certainty has no such estimate.
//
// Numbers are kept as logged, NaN and ±∞ included (a parquet column may hold them): the confidence
// operators refuse them by name rather than meeting a silently shortened group. A per-token null
// (the Python logger's NaN) is NaN here, so the list keeps one value per token.
import type { RolloutConfidences } from './log-types.js';

type Obj = Record<string, unknown>;


/** The wire names a format uses for each field, tried in order. */
export interface ConfidenceKeys {
  selfCertainty: readonly string[];
  entropy: readonly string[];
  tokenEntropies: readonly string[];
  approximate: readonly string[];
}

/** The native roll-out fields (docs/contract.md#native-format), also a NeMo RL line's keys. */
export const NATIVE_CONFIDENCE_KEYS: ConfidenceKeys = {
  selfCertainty: ['self_certainty'],
  entropy: ['entropy'],
  tokenEntropies: ['token_entropies'],
  approximate: ['confidence_approximate'],
};

/**
 * Columns of a verl rollout dump (`reward_extra_info`) and a TRL completions table (`log_extra`):
 * only our hooks' `cl_*` columns. A plain `entropy` column there is whatever a reward function of
 * the user's logged under that name (a TRL run may log one per completion): never taken for ours.
 */
export const COLUMN_CONFIDENCE_KEYS: ConfidenceKeys = {
  selfCertainty: ['cl_self_certainty'],
  entropy: ['cl_entropy'],
  tokenEntropies: ['cl_token_entropies'],
  approximate: ['cl_confidence_approximate'],
};

/** Every wire name of `keys` (a reader leaves them out of a roll-out's `extra`). */
export function confidenceKeyNames(keys: ConfidenceKeys): Set<string> {
  return new Set([...keys.selfCertainty, ...keys.entropy, ...keys.tokenEntropies, ...keys.approximate]);
}

function first(o: Obj, names: readonly string[], unwrap: (v: unknown) => unknown): [string, unknown] | undefined {
  for (const k of names) {
    const v = unwrap(o[k]);
    if (v !== undefined && v !== null) return [k, v];
  }
  return undefined;
}

function num(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

function numbers(v: unknown): number[] | undefined {
  if (!Array.isArray(v) && !ArrayBuffer.isView(v)) return undefined;
  const out: number[] = [];
  const a = v as ArrayLike<unknown>;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    if (x === null) out.push(Number.NaN);
    else {
      const n = num(x);
      if (n === undefined) return undefined;
      out.push(n);
    }
  }
  return out;
}

const same = (v: unknown): unknown => v;

/**
 * The confidences of one roll-out's object `o` under `keys`, or undefined when it has none. A field
 * of the wrong type is left out and its name pushed onto `dropped`. `unwrap`: how the format wraps a
 * value (NeMo RL's micro-batch of one writes `[v]`).
 */
export function readConfidence(o: Obj, keys: ConfidenceKeys, dropped: string[], unwrap: (v: unknown) => unknown = same): RolloutConfidences | undefined {
  const out: RolloutConfidences = {};
  const sc = first(o, keys.selfCertainty, unwrap);
  if (sc) {
    const n = num(sc[1]);
    if (n === undefined) dropped.push(sc[0]);
    else out.selfCertainty = n;
  }
  const en = first(o, keys.entropy, unwrap);
  if (en) {
    const n = num(en[1]);
    if (n === undefined) dropped.push(en[0]);
    else out.entropy = n;
  }
  const te = first(o, keys.tokenEntropies, (v) => v);
  if (te) {
    let v = te[1];
    // NeMo RL's micro-batch of one: [[...]]
    if (unwrap !== same && Array.isArray(v) && v.length === 1 && Array.isArray(v[0])) v = v[0];
    const ns = numbers(v);
    if (ns === undefined) dropped.push(te[0]);
    else out.tokenEntropies = ns;
  }
  if (out.selfCertainty === undefined && out.entropy === undefined && out.tokenEntropies === undefined) return undefined;
  const ap = first(o, keys.approximate, unwrap);
  if (ap) {
    if (typeof ap[1] !== 'boolean') dropped.push(ap[0]);
    else if (ap[1]) out.confidenceApproximate = true;
  }
  return out;
}

/**
 * The approximation from sampled-token log-probs alone: each token's surprisal −log π(y_t) as its
 * entropy, their mean as the roll-out's, marked `confidenceApproximate`. Undefined without tokens
 * or when a log-prob is not a finite number (nothing is estimated from a partial list).
 */
export function surprisalConfidence(tokenLogprobs: unknown): RolloutConfidences | undefined {
  if (!Array.isArray(tokenLogprobs) || tokenLogprobs.length === 0) return undefined;
  const te: number[] = new Array(tokenLogprobs.length);
  let s = 0;
  for (let i = 0; i < tokenLogprobs.length; i++) {
    const x = tokenLogprobs[i];
    if (typeof x !== 'number' || !Number.isFinite(x)) return undefined;
    te[i] = -x;
    s += -x;
  }
  return { entropy: s / te.length, tokenEntropies: te, confidenceApproximate: true };
}

/** Sets `c`'s fields on a roll-out (nothing when undefined). */
export function assignConfidence(r: RolloutConfidences, c: RolloutConfidences | undefined): void {
  if (!c) return;
  if (c.selfCertainty !== undefined) r.selfCertainty = c.selfCertainty;
  if (c.entropy !== undefined) r.entropy = c.entropy;
  if (c.tokenEntropies !== undefined) r.tokenEntropies = c.tokenEntropies;
  if (c.confidenceApproximate) r.confidenceApproximate = true;
}
