// miles trajectory dumps (docs/log-formats.md#slime-and-miles): with `--dump-details DIR`, miles writes
// `DIR/trajectory/{rollout_id}.jsonl` (`eval_{rollout_id}.jsonl` for evaluations) through
// `save_debug_trajectory_data`, one `json.dumps(row, separators=(",", ":"))` line per sample that
// recorded a conversation (the multi-turn and session paths): `sample_index`, `group_index`,
// `status`, `reward` (a number, else null), `prompt` (a string or messages) and `messages` (the
// prompt messages, then the assistant's turns and the tools' replies). Written in one go, beside
// the `rollout_data/{id}.pt` pickle, which is never read (parse.ts torchDumpNotice).
//
// Group: the lines of a file with the same `group_index` (slime's group of `n_samples_per_prompt`
// samples of a prompt). Question id: `p-` + SHA-1 of the prompt text, `#2`, `#3`, … for a second
// group of the same prompt in one step (as verl's uid groups). Text: the assistant messages after
// the prompt's, joined by a blank line. Evaluations are a run of their own (`…/eval`), the
// validation stream. No log-probs or ground truth are in the file.
import { basename, dirname, relative } from 'node:path';
import type { RecordSource } from '../engine';
import { MAX_EXTRA_DEPTH, boundDepth } from './extra';
import type { Conversion } from './native.js';
import { promptId } from './verl.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function looksMiles(o: Obj): boolean {
  return 'sample_index' in o && 'group_index' in o && Array.isArray(o.messages);
}

function contentText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map((p) => (typeof p === 'string' ? p : isObj(p) && typeof p.text === 'string' ? p.text : '')).join('');
  return '';
}

/** The prompt as text: the string, a single message's content, else the messages' contents. */
export function promptText(p: unknown): string {
  if (typeof p === 'string') return p;
  if (Array.isArray(p)) return p.map((m) => (isObj(m) ? contentText(m.content) : '')).join('\n\n');
  return '';
}

/** The sample's text (see the header): what texts.ts reads back from the line. */
export function milesResponse(o: Obj): string | undefined {
  if (!Array.isArray(o.messages)) return undefined;
  const from = Array.isArray(o.prompt) ? o.prompt.length : 0;
  const out: string[] = [];
  for (const m of o.messages.slice(from)) if (isObj(m) && m.role === 'assistant') out.push(contentText(m.content));
  return out.join('\n\n');
}

export class MilesFileContext {
  readonly run: string | undefined;
  readonly fileStep: number | undefined;
  readonly validation: boolean;
  /** `${step}\0${group_index}` → question id, and how many groups of a prompt a step has. */
  private ids = new Map<string, string>();
  private counts = new Map<string, number>();
  constructor(root: string, file: string) {
    const m = /^(eval_)?(\d+)\.jsonl$/i.exec(basename(file));
    this.fileStep = m ? Number(m[2]) : undefined;
    this.validation = !!m?.[1];
    const rel = relative(root, dirname(file));
    const run = rel && !rel.startsWith('..') ? rel.split('\\').join('/') : undefined;
    this.run = this.validation ? (run ? `${run}/eval` : 'eval') : run;
  }

  state(): { ids: Map<string, string>; counts: Map<string, number> } {
    return { ids: this.ids, counts: this.counts };
  }

  restoreState(s: { ids: Map<string, string>; counts: Map<string, number> }): void {
    this.ids = s.ids;
    this.counts = s.counts;
  }

  convert(o: Obj, source: RecordSource): Conversion {
    const step = this.fileStep;
    if (step === undefined) return { ok: false, error: 'miles trajectory line in a file not named <rollout_id>.jsonl / eval_<rollout_id>.jsonl: no step' };
    const response = milesResponse(o);
    if (response === undefined) return { ok: false, error: 'field "messages" must be a list' };
    const prompt = promptText(o.prompt);
    const pid = promptId(prompt);
    const gk = `${step}\0${String(o.group_index)}`;
    let questionId = this.ids.get(gk);
    if (questionId === undefined) {
      const ck = `${step}\0${pid}`;
      const n = (this.counts.get(ck) ?? 0) + 1;
      this.counts.set(ck, n);
      questionId = n === 1 ? pid : `${pid}#${n}`;
      this.ids.set(gk, questionId);
    }
    const dropped: string[] = [];
    let reward: number | null = null;
    if (typeof o.reward === 'number') reward = Number.isFinite(o.reward) ? o.reward : null;
    else if (o.reward !== null && o.reward !== undefined) dropped.push('reward');
    const extra: Obj = {};
    for (const k of Object.keys(o)) if (k !== 'messages' && k !== 'prompt' && k !== 'reward') extra[k] = boundDepth(o[k], MAX_EXTRA_DEPTH - 1);
    if (this.validation && reward !== null) extra.score = reward;
    const idx = o.sample_index;
    return {
      ok: true,
      dropped,
      record: {
        kind: 'rollout',
        run: this.run,
        step,
        questionId,
        prompt,
        groundTruth: null,
        ...(this.validation ? { stream: 'validation' as const } : {}),
        rollout: {
          response,
          meanLogprob: null,
          reward: this.validation ? null : reward,
          ...(typeof idx === 'number' && Number.isInteger(idx) ? { sampleIdx: idx } : {}),
          source,
          extra,
        },
        source,
      },
    };
  }
}
