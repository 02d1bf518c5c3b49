// verl rollout_data_dir / validation_data_dir dumps (SPEC §2.2): `<global_step>.jsonl`, one line per
// roll-out with `input`, `output`, `gts` (optional), `score`, `step`, reward extra-info keys and, in
// newer versions, `uid`. Group key: the uid prefix when present (verl's batch balancing scatters a
// group over the file), else identical `input` text within a step. verl writes no log-probs.
//
// questionId: `p-` + the first 12 hex digits of SHA-1 of the prompt, so a question keeps its id
// across steps (MS-TTRL's cache is per question). When one step holds several uid groups with the
// same prompt, the second and later get `#2`, `#3`, ...
//
// TTRL (which runs on verl) stores the majority-vote label in `gts` and computes `acc` against it;
// its lines carry `extracted_gt` (or `original_gt`, `majority_*` / `ttrl_*` keys). In such a file
// `gts`, `acc` and `extracted_gt` are never read as ground truth; `original_gt` is, when logged.
import { createHash } from 'node:crypto';
import { basename, dirname, relative } from 'node:path';
import type { RecordSource } from '../engine/types.js';
import { parseStep } from './native.js';
import { MAX_EXTRA_DEPTH, boundDepth } from './extra';
import type { Conversion } from './native.js';

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

export function promptId(prompt: string): string {
  return 'p-' + createHash('sha1').update(prompt).digest('hex').slice(0, 12);
}

function textOf(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return Number.isFinite(v as number) || typeof v === 'boolean' ? String(v) : null;
  return JSON.stringify(v);
}

const CORE_KEYS = new Set(['input', 'output', 'gts', 'score', 'step', 'uid']);

/** Per-file state: the run (folder relative to the run root), the file's step, uid → question ids. */
export class VerlFileContext {
  readonly run: string | undefined;
  readonly fileStep: number | undefined;
  ttrl = false;
  private uidIds = new Map<string, string>(); // `${step}\0${uidPrefix}` → questionId
  private idCount = new Map<string, number>(); // `${step}\0${promptId}` → uid groups seen
  constructor(root: string, file: string) {
    const rel = relative(root, dirname(file));
    this.run = rel && !rel.startsWith('..') ? rel.split('\\').join('/') : undefined;
    const m = /^(\d+)\.jsonl?$/i.exec(basename(file));
    this.fileStep = m ? Number(m[1]) : undefined;
  }

  convert(o: Obj, source: RecordSource): Conversion {
    const dropped: string[] = [];
    if (typeof o.output !== 'string') return { ok: false, error: `field "output" must be a string, got ${o.output === null ? 'null' : typeof o.output}` };
    const input = textOf(o.input) ?? '';
    let step = parseStep(o.step);
    if (step === undefined) {
      if (o.step !== undefined && o.step !== null) return { ok: false, error: `field "step" must be a non-negative integer, got ${JSON.stringify(o.step)}` };
      step = this.fileStep;
      if (step === undefined) return { ok: false, error: 'no "step" field and the file name is not <step>.jsonl' };
    }
    const pid = promptId(input);
    let questionId = pid;
    const uid = typeof o.uid === 'string' && o.uid !== '' ? o.uid.split('_')[0] : undefined;
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
    const groundTruth = this.ttrl ? textOf(o.original_gt) : textOf(o.gts);
    let reward: number | null = null;
    if (typeof o.score === 'number') reward = Number.isFinite(o.score) ? o.score : null;
    else if (typeof o.score === 'boolean') reward = o.score ? 1 : 0;
    else if (o.score !== undefined && o.score !== null) dropped.push('score');
    let extra: Obj | undefined;
    for (const k of Object.keys(o)) {
      if (CORE_KEYS.has(k)) continue;
      (extra ??= {})[k] = boundDepth(o[k], MAX_EXTRA_DEPTH - 1);
    }
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
        rollout: { response: o.output, meanLogprob: null, reward, source, ...(extra ? { extra } : {}) },
        source,
      },
    };
  }
}
