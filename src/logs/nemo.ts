// NeMo RL per-step logs: `<log_dir>/train_data_step{N}.jsonl` (and `val_data_step{N}.jsonl`), written
// by `Logger.log_batched_dict_as_jsonl` from the GRPO loop's `log_data`: one line per roll-out with
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
import { basename } from 'node:path';
import type { RecordSource } from '../engine/types.js';
import type { Conversion } from './native.js';
import { promptId } from './verl.js';

type Obj = Record<string, unknown>;

export function looksNemo(o: Obj): boolean {
  return Array.isArray(o.content) && ('rewards' in o || 'generation_logprobs' in o || 'input_lengths' in o);
}

function messageText(m: unknown): string {
  if (typeof m === 'string') return m;
  if (m && typeof m === 'object' && typeof (m as Obj).content === 'string') return (m as Obj).content as string;
  return m === null || m === undefined ? '' : JSON.stringify(m);
}

/** Mean log-prob over the generated tokens (see the header), or null when not logged. */
export function nemoMeanLogprob(o: Obj): number | null {
  const lp = o.generation_logprobs;
  if (!Array.isArray(lp) || lp.length === 0) return null;
  const len = typeof o.input_lengths === 'number' && Number.isInteger(o.input_lengths) ? Math.min(o.input_lengths, lp.length) : lp.length;
  const mask = Array.isArray(o.token_loss_mask) ? o.token_loss_mask : null;
  let s = 0;
  let n = 0;
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
    s += x;
    n++;
  }
  return n ? s / n : null;
}

export class NemoFileContext {
  readonly fileStep: number | undefined;
  readonly validation: boolean;
  constructor(
    readonly run: string | undefined,
    file: string,
  ) {
    const m = /^(train|val)_data_step(\d+)\.jsonl$/i.exec(basename(file));
    this.fileStep = m ? Number(m[2]) : undefined;
    this.validation = m?.[1].toLowerCase() === 'val';
  }

  convert(o: Obj, source: RecordSource): Conversion {
    const content = o.content as unknown[];
    if (content.length === 0) return { ok: false, error: 'field "content" is an empty list' };
    const step = this.fileStep;
    if (step === undefined) return { ok: false, error: 'NeMo RL line in a file not named train_data_step<N>.jsonl / val_data_step<N>.jsonl: no step' };
    const response = messageText(content[content.length - 1]);
    const prompt = content.slice(0, -1).map(messageText).join('\n');
    const dropped: string[] = [];
    let reward: number | null = null;
    if (typeof o.rewards === 'number') reward = Number.isFinite(o.rewards) ? o.rewards : null;
    else if (o.rewards !== undefined && o.rewards !== null) dropped.push('rewards');
    const extra: Obj = {};
    for (const k of Object.keys(o)) if (k !== 'content' && k !== 'generation_logprobs' && k !== 'prev_logprobs' && k !== 'token_ids' && k !== 'token_loss_mask') extra[k] = o[k];
    if (this.validation && reward !== null) extra.score = reward;
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
        ...(this.validation ? { stream: 'validation' as const } : {}),
        rollout: { response, meanLogprob: nemoMeanLogprob(o), reward: this.validation ? null : reward, source, extra },
        source,
      },
    };
  }
}
