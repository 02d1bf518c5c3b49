// prime-rl roll-out files (docs/log-formats.md#prime-rl): `{output_dir}/rollouts/step_{N}/train_rollouts.jsonl`
// and `eval_rollouts.jsonl` (later `eval_rollouts_{env}.jsonl`), written by the orchestrator's
// `save_rollouts` at the end of a step in one `open("w")`, one `json.dump(rollout,
// default=make_serializable)` + "\n" per roll-out: each line is verifiers' `RolloutOutput`
// (`state_to_output`): `example_id`, `task`, `prompt` and `completion` (chat messages), `reward`,
// `metrics` (also flattened to top-level keys), `answer` (omitted when empty), `info` (omitted when
// empty), `is_completed`, `is_truncated`, `stop_condition`, `timing`, `error`, and prime-rl's state
// columns `trajectory` (per turn: `tokens.completion_logprobs`, `completion_mask`) and `sampling_args`.
//
// Evaluation files are a run of their own (`…/eval`), the validation stream.
// Group: the roll-outs of one `example_id` (of one `task`: a run may train on several
// environments) within a step; the step is the `step_{N}` folder. The question id is
// `{task}/{example_id}`, the same across steps (MS-TTRL's cache is per question).
// Text: the completion's assistant messages, joined by a blank line (a multi-turn roll-out's
// tool results are the environment's, not the policy's). Confidence: the mean of the
// trajectory's `completion_logprobs` over the tokens whose `completion_mask` is 1 (all of them
// when no mask is logged). `answer` is the data set's answer: ground truth (a diagnostic).
import { basename, dirname, relative } from 'node:path';
import type { RecordSource } from '../engine';
import { MAX_EXTRA_DEPTH, boundDepth } from './extra';
import type { Conversion } from './native.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function looksPrimeRl(o: Obj): boolean {
  return 'example_id' in o && 'completion' in o && 'reward' in o && ('prompt' in o || 'task' in o);
}

/** The text of a chat message's content: a string, or the text parts of a list of parts. */
function contentText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) {
    const parts: string[] = [];
    for (const p of c) {
      if (typeof p === 'string') parts.push(p);
      else if (isObj(p) && typeof p.text === 'string') parts.push(p.text);
    }
    return parts.join('');
  }
  return '';
}

/** A verifiers `Messages` value: a list of `{role, content}` or, for completion environments, a string. */
function messagesText(m: unknown, roles?: ReadonlySet<string>): string {
  if (typeof m === 'string') return m;
  if (!Array.isArray(m)) return '';
  const out: string[] = [];
  for (const msg of m) {
    if (!isObj(msg)) continue;
    if (roles && !roles.has(String(msg.role))) continue;
    out.push(contentText(msg.content));
  }
  return out.join('\n\n');
}

const ASSISTANT = new Set(['assistant']);

/** The roll-out's text (see the header): what texts.ts reads back from the line. */
export function primeRlResponse(o: Obj): string | undefined {
  if (typeof o.completion !== 'string' && !Array.isArray(o.completion)) return undefined;
  return messagesText(o.completion, ASSISTANT);
}

/** Mean completion log-prob over the trajectory's trained tokens, or null when none is logged. */
export function primeRlMeanLogprob(o: Obj): number | null {
  if (!Array.isArray(o.trajectory)) return null;
  let s = 0;
  let n = 0;
  for (const step of o.trajectory) {
    const t = isObj(step) ? step.tokens : undefined;
    if (!isObj(t) || !Array.isArray(t.completion_logprobs)) continue;
    const mask = Array.isArray(t.completion_mask) && t.completion_mask.length === t.completion_logprobs.length ? t.completion_mask : null;
    for (let i = 0; i < t.completion_logprobs.length; i++) {
      if (mask && mask[i] !== 1 && mask[i] !== true) continue;
      const x = t.completion_logprobs[i];
      if (typeof x !== 'number' || !Number.isFinite(x)) return null;
      s += x;
      n++;
    }
  }
  return n ? s / n : null;
}

/** Keys kept out of `extra`: the texts, the token data, and what the record's fields already hold. */
const OMIT = new Set(['prompt', 'completion', 'trajectory', 'reward', 'answer', 'example_id', 'task', 'tool_defs', 'sampling_args', 'timing', 'error_chain', 'long_error_chain']);

export class PrimeRlFileContext {
  readonly run: string | undefined;
  readonly fileStep: number | undefined;
  readonly validation: boolean;
  constructor(root: string, file: string) {
    const dir = dirname(file);
    const m = /^step_(\d+)$/.exec(basename(dir));
    this.fileStep = m ? Number(m[1]) : undefined;
    // the run is the folder above `step_{N}` (`rollouts/`), so every step is one run
    const rel = relative(root, m ? dirname(dir) : dir);
    const run = rel && !rel.startsWith('..') ? rel.split('\\').join('/') : undefined;
    // evaluation roll-outs share the steps and the example ids of training: a run of their own
    // (`eval`, `eval/{env}` for `eval_rollouts_{env}.jsonl`), as NeMo RL's `val`
    const ev = /^eval_rollouts(?:_(.+))?\.jsonl$/i.exec(basename(file));
    this.validation = ev !== null;
    const sub = ev ? (ev[1] ? `eval/${ev[1]}` : 'eval') : undefined;
    this.run = sub ? (run ? `${run}/${sub}` : sub) : run;
  }

  convert(o: Obj, source: RecordSource): Conversion {
    const step = this.fileStep;
    if (step === undefined) return { ok: false, error: 'prime-rl roll-out in a folder not named step_<N>: no step' };
    const response = primeRlResponse(o);
    if (response === undefined) return { ok: false, error: `field "completion" must be a list of messages or a string, got ${o.completion === null ? 'null' : typeof o.completion}` };
    const ex = o.example_id;
    if ((typeof ex !== 'number' || !Number.isInteger(ex)) && typeof ex !== 'string') return { ok: false, error: 'field "example_id" must be an integer' };
    const task = typeof o.task === 'string' && o.task !== '' ? o.task : 'default';
    const dropped: string[] = [];
    let reward: number | null = null;
    if (typeof o.reward === 'number') reward = Number.isFinite(o.reward) ? o.reward : null;
    else if (o.reward !== null && o.reward !== undefined) dropped.push('reward');
    let groundTruth: string | null = null;
    if (typeof o.answer === 'string' && o.answer !== '') groundTruth = o.answer;
    else if (typeof o.answer === 'number' && Number.isFinite(o.answer)) groundTruth = String(o.answer);
    const extra: Obj = {};
    for (const k of Object.keys(o)) if (!OMIT.has(k)) extra[k] = boundDepth(o[k], MAX_EXTRA_DEPTH - 1);
    if (this.validation && reward !== null) extra.score = reward;
    return {
      ok: true,
      dropped,
      record: {
        kind: 'rollout',
        run: this.run,
        step,
        questionId: `${task}/${ex}`,
        prompt: messagesText(o.prompt),
        groundTruth,
        ...(this.validation ? { stream: 'validation' as const } : {}),
        rollout: { response, meanLogprob: primeRlMeanLogprob(o), reward: this.validation ? null : reward, source, extra },
        source,
      },
    };
  }
}
