// Native format consensus-lens/v1 (docs/contract.md#native-format): wire names → engine names, with type checks.
// A record whose required field has the wrong type is rejected with one message; an optional field
// with the wrong type is dropped (reported once per file and field by the caller).
import type { Framework, OutcomeCheck, RecordSource, Rollout, Verification } from '../engine';
import { finiteOrNull } from './json.js';
import { boundDepth } from './extra';
import { NATIVE_CONFIDENCE_KEYS, assignConfidence, readConfidence, surprisalConfidence } from './confidence-fields.js';
import type { ParsedRecord } from './log-types.js';

export type Conversion =
  | { ok: true; record: ParsedRecord; dropped: string[] }
  | { ok: false; error: string };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** True when a parsed JSON object looks like a native record (used by format detection). */
export function looksNative(o: Obj): boolean {
  return (
    o.kind === 'rollout' ||
    o.kind === 'group' ||
    Array.isArray(o.rollouts) ||
    ('question_id' in o && ('response' in o || 'rollouts' in o))
  );
}

/**
 * Step: a non-negative integer, or a string of digits — at most 2^53 − 1: a larger integer cannot
 * be told apart from its neighbours once parsed (JSON.parse rounds it), so it is rejected rather
 * than rounded into another step.
 */
export function parseStep(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= Number.MAX_SAFE_INTEGER) return v;
  if (typeof v === 'string' && /^\s*\d+\s*$/.test(v) && Number(v) <= Number.MAX_SAFE_INTEGER) return Number(v);
  return undefined;
}

/** The message for a step that parseStep rejects. */
export function stepError(v: unknown): string {
  if (typeof v === 'number' && Number.isInteger(v) && v > Number.MAX_SAFE_INTEGER) {
    return 'field "step" is an integer beyond 2^53 − 1, which a JSON number cannot hold exactly (it would be rounded into another step)';
  }
  if (typeof v === 'string' && /^\s*\d+\s*$/.test(v)) return `field "step" ${v.trim()} is beyond 2^53 − 1 and cannot be represented exactly`;
  return `field "step" must be a non-negative integer, got ${describe(v)}`;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 20 ? v.slice(0, 20) + '…' : v)}`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

function optString(o: Obj, key: string, dropped: string[]): string | null | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  dropped.push(key);
  return undefined;
}

function optNumber(o: Obj, key: string, dropped: string[]): number | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'boolean' && key === 'reward') return v ? 1 : 0;
  dropped.push(key);
  return null;
}

function meanOf(values: unknown, dropped: string[]): number | null {
  if (!Array.isArray(values)) {
    dropped.push('token_logprobs');
    return null;
  }
  if (values.length === 0) return null;
  let s = 0;
  for (const x of values) {
    // A NaN/±Infinity entry (null after the NaN rewrite) makes the mean missing, not biased.
    if (typeof x !== 'number' || !Number.isFinite(x)) return null;
    s += x;
  }
  const m = s / values.length;
  return Number.isFinite(m) ? m : null;
}

function parseVerification(v: unknown, dropped: string[]): Verification | null {
  if (v === undefined || v === null) return null;
  if (!isObj(v)) {
    dropped.push('verification');
    return null;
  }
  const out: Verification = {};
  if (typeof v.valid === 'boolean') out.valid = v.valid;
  else if (v.valid !== undefined && v.valid !== null) dropped.push('verification.valid');
  const to = v.tool_output;
  if (typeof to === 'string') out.toolOutput = to;
  else if (typeof to === 'number' && Number.isFinite(to)) out.toolOutput = String(to);
  else if (to !== undefined && to !== null) dropped.push('verification.tool_output');
  return out.valid === undefined && out.toolOutput === undefined ? null : out;
}

/** Converts one roll-out object (a roll-out record, or an item of a group's `rollouts`). */
export function convertRollout(o: Obj, where: string, dropped: string[]): Rollout & { extra?: Obj } | string {
  if (typeof o.response !== 'string') {
    return o.response === undefined ? `${where}missing required field "response"` : `${where}field "response" must be a string, got ${describe(o.response)}`;
  }
  const r: Rollout & { extra?: Obj } = { response: o.response };
  const answer = optString(o, 'answer', dropped);
  if (answer !== undefined) r.answer = answer;
  let ml = optNumber(o, 'mean_logprob', dropped);
  if (o.mean_logprob === undefined && o.token_logprobs !== undefined && o.token_logprobs !== null) ml = meanOf(o.token_logprobs, dropped);
  r.meanLogprob = ml;
  // Self-certainty and entropy as logged; else, from the sampled tokens' log-probs, the approximation (marked so).
  assignConfidence(r, readConfidence(o, NATIVE_CONFIDENCE_KEYS, dropped) ?? surprisalConfidence(o.token_logprobs));
  r.reward = optNumber(o, 'reward', dropped);
  if (o.advantage !== undefined) r.advantage = optNumber(o, 'advantage', dropped);
  const ver = parseVerification(o.verification, dropped);
  if (ver) r.verification = ver;
  const si = o.sample_idx;
  if (typeof si === 'number' && Number.isInteger(si)) r.sampleIdx = si;
  else if (si !== undefined && si !== null) dropped.push('sample_idx');
  if (isObj(o.extra)) r.extra = boundDepth(o.extra);
  return r;
}

function parseOutcomeChecks(v: unknown, dropped: string[]): OutcomeCheck[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) {
    dropped.push('outcome_checks');
    return undefined;
  }
  const out: OutcomeCheck[] = [];
  for (const c of v) {
    if (!isObj(c)) continue;
    const answer = typeof c.answer === 'string' ? c.answer : typeof c.answer === 'number' && Number.isFinite(c.answer) ? String(c.answer) : undefined;
    const passed = finiteOrNull(c.passed);
    const trials = finiteOrNull(c.trials);
    if (answer === undefined || passed === null || trials === null || trials <= 0 || passed < 0) {
      dropped.push('outcome_checks[]');
      continue;
    }
    out.push({ answer, passed, trials });
  }
  return out;
}

/** The operator a record's `extra` names (the Python reward helpers write `{"operator": "ec"}`). */
function operatorOf(extra: unknown): string | undefined {
  return isObj(extra) && typeof extra.operator === 'string' && extra.operator !== '' ? extra.operator : undefined;
}

/** Converts a parsed native JSON object. */
export function convertNative(value: unknown, source: RecordSource): Conversion {
  if (!isObj(value)) return { ok: false, error: `expected a JSON object, got ${describe(value)}` };
  const o = value;
  const dropped: string[] = [];
  const step = parseStep(o.step);
  if (step === undefined) {
    return { ok: false, error: o.step === undefined ? 'missing required field "step"' : stepError(o.step) };
  }
  const qv = o.question_id;
  let questionId: string;
  if (typeof qv === 'string') questionId = qv;
  else if (typeof qv === 'number' && Number.isFinite(qv)) questionId = String(qv);
  else return { ok: false, error: qv === undefined ? 'missing required field "question_id"' : `field "question_id" must be a string, got ${describe(qv)}` };
  const run = typeof o.run_id === 'string' && o.run_id !== '' ? o.run_id : undefined;
  const prompt = optString(o, 'prompt', dropped) ?? undefined;
  // `ground_truth`: the answer, or a list of its accepted forms (the first is shown; docs/contract.md#ground-truth)
  const truthList = Array.isArray(o.ground_truth) ? o.ground_truth.filter((x): x is string => typeof x === 'string' && x !== '') : undefined;
  if (truthList && truthList.length !== (o.ground_truth as unknown[]).length) dropped.push('ground_truth');
  const groundTruth = truthList ? (truthList[0] ?? null) : optString(o, 'ground_truth', dropped);
  const forms = truthList && truthList.length > 1 ? { groundTruthForms: truthList } : {};
  const framework = o.framework === 'trl' || o.framework === 'verl' || o.framework === 'nemo-rl' ? (o.framework as Framework) : undefined;
  if (o.framework !== undefined && framework === undefined) dropped.push('framework');
  const fw = framework ? { framework } : {};
  const isGroup = o.kind === 'group' || (o.kind !== 'rollout' && 'rollouts' in o);
  if (o.kind !== undefined && o.kind !== 'group' && o.kind !== 'rollout') {
    return { ok: false, error: `unknown record kind ${describe(o.kind)} (expected "rollout" or "group")` };
  }
  if (isGroup) {
    if (!Array.isArray(o.rollouts)) return { ok: false, error: `field "rollouts" must be an array, got ${describe(o.rollouts)}` };
    const rollouts: Array<Rollout & { extra?: Obj }> = [];
    for (let i = 0; i < o.rollouts.length; i++) {
      const item = o.rollouts[i];
      if (!isObj(item)) return { ok: false, error: `rollouts[${i}] must be an object, got ${describe(item)}` };
      const r = convertRollout(item, `rollouts[${i}]: `, dropped);
      if (typeof r === 'string') return { ok: false, error: r };
      rollouts.push(r); // per-roll-out sources ({...source, item: i}) are added by the consumer that keeps them

    }
    const outcomeChecks = parseOutcomeChecks(o.outcome_checks, dropped);
    const loggedOperator = operatorOf(o.extra);
    return {
      ok: true,
      dropped,
      record: { kind: 'group', run, step, questionId, prompt, groundTruth, ...forms, outcomeChecks, rollouts, source, ...fw, ...(loggedOperator ? { loggedOperator } : {}) },
    };
  }
  const r = convertRollout(o, '', dropped);
  if (typeof r === 'string') return { ok: false, error: r };
  r.source = source;
  const loggedOperator = operatorOf(o.extra);
  return { ok: true, dropped, record: { kind: 'rollout', run, step, questionId, prompt, groundTruth, ...forms, rollout: r, source, ...fw, ...(loggedOperator ? { loggedOperator } : {}) } };
}
