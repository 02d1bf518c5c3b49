// SkyRL evaluation dumps (docs/log-formats.md#skyrl): with `trainer.dump_eval_results`, each
// evaluation writes `{export_path}/dumped_evals/global_step_{N}_evals/{data_source}.jsonl` (an
// evaluation without training: `eval_only/`) through `dump_per_dataset_eval_results`, one
// `open("w")`, one `json.dumps(entry, ensure_ascii=False)` + "\n" per sample: `input_prompt` and
// `output_response` (the token ids decoded by the tokenizer), `score` (the reward: a number, or a
// list of per-token rewards), `stop_reason`, `env_class`, `env_extras` (the data set row's other
// columns: `reward_model.ground_truth` for verl-style data, `reward_spec.ground_truth` for SkyRL's)
// and `data_source`; plus `aggregated_results.jsonl` (the metrics: not a log).
//
// No group id is written: the samples of a prompt are consecutive (`prepare_generator_input`
// repeats each prompt `eval_n_samples_per_prompt` times), and a group is the lines of a file with
// the same `input_prompt` (the assembler says when a group's size is not the usual one). Every
// group is the validation stream: these are evaluations against the data set's answers, so the
// score is kept in `extra`, not as a consensus reward. No log-probs are dumped.
import { basename, dirname, relative } from 'node:path';
import type { RecordSource } from '../engine';
import { MAX_EXTRA_DEPTH, boundDepth } from './extra';
import type { Conversion } from './native.js';
import { promptId } from './verl.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function looksSkyrl(o: Obj): boolean {
  return 'input_prompt' in o && 'output_response' in o;
}

/** A score: a number, or per-token rewards summed (SkyRL's sequence reward is their sum). */
function scoreOf(v: unknown): number | null | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (Array.isArray(v)) {
    let s = 0;
    for (const x of v) {
      if (typeof x !== 'number' || !Number.isFinite(x)) return undefined;
      s += x;
    }
    return s;
  }
  return v === null || v === undefined ? null : undefined;
}

/** The data set's answer in `env_extras`, when it holds one. */
function truthOf(extras: unknown): string | null {
  if (!isObj(extras)) return null;
  for (const k of ['reward_spec', 'reward_model']) {
    const r = extras[k];
    if (isObj(r)) {
      const g = r.ground_truth;
      if (typeof g === 'string') return g;
      if (typeof g === 'number' && Number.isFinite(g)) return String(g);
    }
  }
  return null;
}

export class SkyrlFileContext {
  readonly run: string | undefined;
  readonly fileStep: number | undefined;
  constructor(root: string, file: string) {
    const dir = dirname(file);
    const name = basename(dir);
    const m = /^global_step_(\d+)_evals$/.exec(name);
    this.fileStep = m ? Number(m[1]) : name === 'eval_only' ? 0 : undefined;
    // the run is the folder above the step folders (`dumped_evals/`), so every step is one run
    const rel = relative(root, this.fileStep !== undefined ? dirname(dir) : dir);
    this.run = rel && !rel.startsWith('..') ? rel.split('\\').join('/') : undefined;
  }

  convert(o: Obj, source: RecordSource): Conversion {
    const step = this.fileStep;
    if (step === undefined) return { ok: false, error: 'SkyRL evaluation sample in a folder not named global_step_<N>_evals or eval_only: no step' };
    if (typeof o.output_response !== 'string') return { ok: false, error: `field "output_response" must be a string, got ${o.output_response === null ? 'null' : typeof o.output_response}` };
    const prompt = typeof o.input_prompt === 'string' ? o.input_prompt : JSON.stringify(o.input_prompt ?? '');
    const dropped: string[] = [];
    const score = scoreOf(o.score);
    if (score === undefined) dropped.push('score');
    const extra: Obj = {};
    for (const k of Object.keys(o)) if (k !== 'input_prompt' && k !== 'output_response' && k !== 'score') extra[k] = boundDepth(o[k], MAX_EXTRA_DEPTH - 1);
    if (typeof score === 'number') extra.score = score;
    return {
      ok: true,
      dropped,
      record: {
        kind: 'rollout',
        run: this.run,
        step,
        questionId: promptId(prompt),
        prompt,
        groundTruth: truthOf(o.env_extras),
        stream: 'validation',
        rollout: { response: o.output_response, meanLogprob: null, reward: null, source, extra },
        source,
      },
    };
  }
}
