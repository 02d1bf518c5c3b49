// verl rollout_data_dir / validation_data_dir dumps (docs/contract.md#framework-logs): `<global_step>.jsonl`, one line per
// roll-out with `input`, `output`, `gts` (optional), `score`, `step`, reward extra-info keys and, in
// newer versions, `uid`. Group key: the uid prefix when present (verl's batch balancing scatters a
// group over the file), else identical `input` text within a step. verl writes no log-probs.
//
// uid forms: legacy verl writes a uuid4 per prompt (all its roll-outs share it); verl V1 writes
// `{uuid}_{session}_{output}` (ray_trainer v1 `_dump_rollout_data` sorts by that key) and groups
// with `uid.rsplit('_', 2)[0]` — the uuid itself may hold underscores, so the split is from the
// right. In a multi-turn session only the final output is the roll-out (see ParsedRecord.turn).
// `gts` may be a list of accepted forms (`["\\frac{3}{4}", "0.75"]`): a label equal to any is correct.
// Validation dumps (`validation_data_dir`) carry a `reward` key (verl adds the scores to
// reward_extra_infos under "reward"); their rewards are against the real answer, so the group is
// marked as the validation stream (docs/contract.md#framework-logs) and the logged reward is kept only in `extra`.
//
// questionId: `p-` + the first 12 hex digits of SHA-1 of the prompt, so a question keeps its id
// across steps (MS-TTRL's cache is per question). When one step holds several uid groups with the
// same prompt, the second and later get `#2`, `#3`, ...
//
// TTRL (which runs on verl) stores the majority-vote label in `gts` and computes `acc` against it;
// its lines carry `extracted_gt` (or `original_gt`, `majority_*` / `ttrl_*` keys). In such a file
// `gts`, `acc` and `extracted_gt` are never read as ground truth; `original_gt` is, when logged.
//
// Self-certainty and token entropy (confidence.ts): reward extra-info columns `cl_self_certainty`,
// `cl_entropy`, `cl_token_entropies` (consensus_lens.verl with `entropies`: the actor's entropys;
// a plain `entropy` key is a reward function's own, kept in extra); else, from dumped `rollout_log_probs`, the approximation, marked so.
import type * as Crypto from 'node:crypto';
import { basename, dirname, relative } from 'node:path';
import type { RecordSource, Rollout } from '../engine';
import { parseStep, stepError } from './native.js';
import { MAX_EXTRA_DEPTH, boundDepth } from './extra';
import type { Conversion } from './native.js';
import { COLUMN_CONFIDENCE_KEYS, assignConfidence, confidenceKeyNames, readConfidence, surprisalConfidence } from './confidence-fields.js';

type Obj = Record<string, unknown>;

export function looksVerl(o: Obj): boolean {
  return 'input' in o && 'output' in o && ('score' in o || 'step' in o || 'gts' in o);
}

export function isTtrlRecord(o: Obj): boolean {
  for (const k of Object.keys(o)) {
    if (k === 'extracted_gt' || k === 'original_gt' || k.startsWith('ttrl') || k.startsWith('majority')) return true;
  }
  return false;
}

// node:crypto is required on first use: loading it costs every CLI start-up ~7 ms.
export function promptId(prompt: string): string {
  return 'p-' + (require('node:crypto') as typeof Crypto).createHash('sha1').update(prompt).digest('hex').slice(0, 12);
}

function textOf(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return Number.isFinite(v as number) || typeof v === 'boolean' ? String(v) : null;
  return JSON.stringify(v);
}

const CORE_KEYS = new Set(['input', 'output', 'gts', 'score', 'step', 'uid', ...confidenceKeyNames(COLUMN_CONFIDENCE_KEYS)]);

/** A uid split as verl does: V1 `{uuid}_{session}_{output}`, else the whole uid (legacy uuid4). */
export function splitUid(uid: string): { group: string; session?: string; output?: number } {
  const m = /^(.+)_(\d+)_(\d+)$/.exec(uid);
  if (m) return { group: m[1], session: `${m[1]}_${m[2]}`, output: Number(m[3]) };
  // `{uuid}_{sample}` (recipes that suffix the sample index): the group is the uuid
  const m2 = /^(.+)_(\d+)$/.exec(uid);
  return { group: m2 ? m2[1] : uid };
}

/** verl `gts`: a string, a number, or a list of accepted forms (first is the display form). */
function truthForms(v: unknown): string[] | null {
  if (Array.isArray(v)) {
    const forms = v.map(textOf).filter((x): x is string => x !== null);
    return forms.length ? forms : null;
  }
  const t = textOf(v);
  return t === null ? null : [t];
}

/** Per-file state: the run (folder relative to the run root), the file's step, uid → question ids. */
export class VerlFileContext {
  readonly run: string | undefined;
  readonly fileStep: number | undefined;
  ttrl = false;
  /** The file lies in a folder verl's validation dumps are usually written to (val/, validation/). */
  readonly validationFolder: boolean;
  private uidIds = new Map<string, string>(); // `${step}\0${uidPrefix}` → questionId
  private idCount = new Map<string, number>(); // `${step}\0${promptId}` → uid groups seen
  constructor(root: string, file: string) {
    const rel = relative(root, dirname(file));
    this.run = rel && !rel.startsWith('..') ? rel.split('\\').join('/') : undefined;
    const m = /^(\d+)\.jsonl?$/i.exec(basename(file));
    this.fileStep = m ? Number(m[1]) : undefined;
    this.validationFolder = /^(val|valid|validation|val_generations|validation_data)$/i.test(basename(dirname(file)));
  }

  /** The question ids given to uid groups so far (a persisted index resumes the file from them). */
  state(): { ttrl: boolean; uidIds: Map<string, string>; idCount: Map<string, number> } {
    return { ttrl: this.ttrl, uidIds: this.uidIds, idCount: this.idCount };
  }

  restoreState(s: { ttrl: boolean; uidIds: Map<string, string>; idCount: Map<string, number> }): void {
    this.ttrl = s.ttrl;
    this.uidIds = s.uidIds;
    this.idCount = s.idCount;
  }

  convert(o: Obj, source: RecordSource): Conversion {
    const dropped: string[] = [];
    if (typeof o.output !== 'string') return { ok: false, error: `field "output" must be a string, got ${o.output === null ? 'null' : typeof o.output}` };
    const input = textOf(o.input) ?? '';
    let step = parseStep(o.step);
    if (step === undefined) {
      if (o.step !== undefined && o.step !== null) return { ok: false, error: stepError(o.step) };
      step = this.fileStep;
      if (step === undefined) return { ok: false, error: 'no "step" field and the file name is not <step>.jsonl' };
    }
    const pid = promptId(input);
    let questionId = pid;
    const split = typeof o.uid === 'string' && o.uid !== '' ? splitUid(o.uid) : undefined;
    const uid = split?.group;
    if (uid !== undefined) {
      const k = `${step}\0${uid}`;
      let id = this.uidIds.get(k);
      if (id === undefined) {
        const ck = `${step}\0${pid}`;
        const n = (this.idCount.get(ck) ?? 0) + 1;
        this.idCount.set(ck, n);
        id = n === 1 ? pid : `${pid}#${n}`;
        this.uidIds.set(k, id);
      }
      questionId = id;
    }
    if (!this.ttrl && isTtrlRecord(o)) this.ttrl = true;
    const forms = this.ttrl ? truthForms(o.original_gt) : truthForms(o.gts);
    const groundTruth = forms ? forms[0] : null;
    let reward: number | null = null;
    if (typeof o.score === 'number') reward = Number.isFinite(o.score) ? o.score : null;
    else if (typeof o.score === 'boolean') reward = o.score ? 1 : 0;
    else if (o.score !== undefined && o.score !== null) dropped.push('score');
    const validation = 'reward' in o || this.validationFolder;

    let extra: Obj | undefined;
    for (const k of Object.keys(o)) {
      if (CORE_KEYS.has(k)) continue;
      (extra ??= {})[k] = boundDepth(o[k], MAX_EXTRA_DEPTH - 1);
    }
    if (validation && reward !== null) (extra ??= {}).score = reward;
    const rollout: Rollout & { extra?: Obj } = { response: o.output, meanLogprob: validation ? null : rolloutLogprob(o), reward: validation ? null : reward, source, ...(extra ? { extra } : {}) };
    assignConfidence(rollout, readConfidence(o, COLUMN_CONFIDENCE_KEYS, dropped) ?? (validation ? undefined : surprisalConfidence(o.rollout_log_probs ?? o.token_logprobs)));
    return {
      ok: true,
      dropped,
      record: {
        kind: 'rollout',
        run: this.run,
        step,
        questionId,
        prompt: input,
        groundTruth,
        framework: 'verl',
        ...(forms && forms.length > 1 ? { groundTruthForms: forms } : {}),
        ...(validation ? { stream: 'validation' as const } : {}),
        rollout,
        ...(split?.session !== undefined ? { turn: { session: split.session, output: split.output! } } : {}),
        source,
      },
    };
  }
}

/**
 * Mean token log-prob of a verl line when per-token log-probs were dumped (our `consensus_lens`
 * helpers add `rollout_log_probs`, the response tokens' log-probs): the confidence c_i.
 */
function rolloutLogprob(o: Obj): number | null {
  const v = o.rollout_log_probs ?? o.token_logprobs;
  if (typeof o.mean_logprob === 'number' && Number.isFinite(o.mean_logprob)) return o.mean_logprob;
  if (!Array.isArray(v) || v.length === 0) return null;
  let s = 0;
  for (const x of v) {
    if (typeof x !== 'number' || !Number.isFinite(x)) return null;
    s += x;
  }
  return s / v.length;
}
