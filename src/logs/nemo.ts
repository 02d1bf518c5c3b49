// NeMo RL per-step logs: `<log_dir>/train_data_step{N}.jsonl` (and `val_data_step{N}.jsonl`), written
// by `Logger.log_batched_dict_as_jsonl` from the GRPO loop's `log_data`: one line per roll-out (a
// micro-batch of one: every value is wrapped in a one-element list, plus an `idx`) with
// `content` (the flattened message log's contents: the prompt messages, then the generated
// response last), `rewards`, `generation_logprobs` and `prev_logprobs` (per token over the whole
// padded sequence: 0 at prompt and padding positions), `input_lengths`, and in newer versions
// `token_loss_mask` (1 at generated tokens) and `token_ids`. The roll-outs of a prompt are
// consecutive (the batch is `repeat_interleave`d `num_generations_per_prompt` times); a group is
// the lines of a step with identical prompt text, complete at the end of its file (written in one go).
//
// Confidence: c_i is the mean of `generation_logprobs` over the generated tokens (CISC, CoRE) —
// the positions where `token_loss_mask` is 1 when logged, else the positions from the first
// non-zero log-prob up to `input_lengths` (the prompt's positions hold 0).
//
// Self-certainty and token entropy (confidence.ts): NeMo RL logs the sampled tokens' log-probs only,
// so a line gives the approximation (each generated token's surprisal, marked so) unless the loop
// put real values into `log_data` as `self_certainty`, `entropy`, `token_entropies` (one-element
// lists like every value of the line).
import { basename } from 'node:path';
import type { RecordSource } from '../engine';
import type { Conversion } from './native.js';
import { promptId } from './verl.js';
import { NATIVE_CONFIDENCE_KEYS, assignConfidence, confidenceKeyNames, readConfidence, surprisalConfidence } from './confidence-fields.js';
import type { Rollout } from '../engine';

const CONFIDENCE_KEYS = confidenceKeyNames(NATIVE_CONFIDENCE_KEYS);

type Obj = Record<string, unknown>;

/** A value of a micro-batch of one (`[v]`) unwrapped; older writers wrote `v` itself. */
function one(v: unknown): unknown {
  return Array.isArray(v) && v.length === 1 ? v[0] : v;
}

/** `content` of a line: the sample's message contents (`[[...]]` in a micro-batch of one). */
function contents(o: Obj): unknown[] {
  const c = o.content as unknown[];
  return c.length === 1 && Array.isArray(c[0]) ? (c[0] as unknown[]) : c;
}

/** A list-valued field of a line (`[[...]]` in a micro-batch of one). */
function listField(o: Obj, k: string): unknown[] | null {
  const v = o[k];
  if (!Array.isArray(v)) return null;
  return v.length === 1 && Array.isArray(v[0]) ? (v[0] as unknown[]) : v;
}

/** The generated response of a NeMo RL line: the last message of its `content`. */
export function nemoResponse(o: Obj): string | undefined {
  if (!Array.isArray(o.content)) return undefined;
  const c = contents(o);
  return c.length ? messageText(c[c.length - 1]) : undefined;
}

export function looksNemo(o: Obj): boolean {
  return Array.isArray(o.content) && ('rewards' in o || 'generation_logprobs' in o || 'input_lengths' in o);
}

function messageText(m: unknown): string {
  if (typeof m === 'string') return m;
  if (m && typeof m === 'object' && typeof (m as Obj).content === 'string') return (m as Obj).content as string;
  return m === null || m === undefined ? '' : JSON.stringify(m);
}

/**
 * The generated tokens of a NeMo RL line (see the header): their positions in `generation_logprobs`
 * (and `token_ids`), and their log-probs; null when not logged or a value is not a finite number.
 */
export function nemoGenerated(o: Obj): { positions: number[]; logprobs: number[] } | null {
  const lp = listField(o, 'generation_logprobs');
  if (!lp || lp.length === 0) return null;
  const il = one(o.input_lengths);
  const len = typeof il === 'number' && Number.isInteger(il) ? Math.min(il, lp.length) : lp.length;
  const mask = listField(o, 'token_loss_mask');
  const positions: number[] = [];
  const logprobs: number[] = [];
  let started = mask !== null;
  for (let i = 0; i < len; i++) {
    const x = lp[i];
    if (typeof x !== 'number' || !Number.isFinite(x)) return null;
    if (mask) {
      if (mask[i] !== 1 && mask[i] !== true) continue;
    } else if (!started) {
      if (x === 0) continue;
      started = true;
    }
    positions.push(i);
    logprobs.push(x);
  }
  return { positions, logprobs };
}

/** Mean log-prob over the generated tokens (see the header), or null when not logged. */
export function nemoMeanLogprob(o: Obj): number | null {
  const g = nemoGenerated(o);
  if (!g?.logprobs.length) return null;
  let s = 0;
  for (const x of g.logprobs) s += x;
  return s / g.logprobs.length;
}

/** The token ids at the generated positions, when the line logs `token_ids` over the same positions. */
export function nemoGeneratedIds(o: Obj, positions: readonly number[]): number[] | null {
  const ids = listField(o, 'token_ids');
  const lp = listField(o, 'generation_logprobs');
  if (!ids || !lp || ids.length !== lp.length) return null;
  const out: number[] = [];
  for (const i of positions) {
    const v = ids[i];
    if (typeof v !== 'number' || !Number.isInteger(v)) return null;
    out.push(v);
  }
  return out;
}

export class NemoFileContext {
  readonly fileStep: number | undefined;
  readonly validation: boolean;
  /** The run: the folder, with `/val` for validation files (they share the folder and the steps). */
  readonly run: string | undefined;
  constructor(folderRun: string | undefined, file: string) {
    const m = /^(train|val)_data_step(\d+)\.jsonl$/i.exec(basename(file));
    this.fileStep = m ? Number(m[2]) : undefined;
    this.validation = m?.[1].toLowerCase() === 'val';
    this.run = this.validation ? (folderRun ? `${folderRun}/val` : 'val') : folderRun;
  }

  convert(o: Obj, source: RecordSource): Conversion {
    if (!Array.isArray(o.content)) return { ok: false, error: `field "content" must be a list, got ${o.content === null ? 'null' : o.content === undefined ? 'nothing' : typeof o.content}` };
    const content = contents(o);
    if (content.length === 0) return { ok: false, error: 'field "content" is an empty list' };
    const step = this.fileStep;
    if (step === undefined) return { ok: false, error: 'NeMo RL line in a file not named train_data_step<N>.jsonl / val_data_step<N>.jsonl: no step' };
    const response = messageText(content[content.length - 1]);
    const prompt = content.slice(0, -1).map(messageText).join('\n');
    const dropped: string[] = [];
    let reward: number | null = null;
    const rw = one(o.rewards);
    if (typeof rw === 'number') reward = Number.isFinite(rw) ? rw : null;
    else if (rw !== undefined && rw !== null) dropped.push('rewards');
    const extra: Obj = {};
    for (const k of Object.keys(o)) if (k !== 'content' && k !== 'generation_logprobs' && k !== 'prev_logprobs' && k !== 'token_ids' && k !== 'token_loss_mask' && !CONFIDENCE_KEYS.has(k)) extra[k] = one(o[k]);
    if (this.validation && reward !== null) extra.score = reward;
    const rollout: Rollout & { extra?: Obj } = { response, meanLogprob: nemoMeanLogprob(o), reward: this.validation ? null : reward, source, extra };
    if (!this.validation) assignConfidence(rollout, readConfidence(o, NATIVE_CONFIDENCE_KEYS, dropped, one) ?? surprisalConfidence(nemoGenerated(o)?.logprobs));
    return {
      ok: true,
      dropped,
      record: {
        kind: 'rollout',
        run: this.run,
        step,
        questionId: promptId(prompt),
        prompt,
        groundTruth: null,
        framework: 'nemo-rl',
        ...(this.validation ? { stream: 'validation' as const } : {}),
        rollout,
        source,
      },
    };
  }
}
