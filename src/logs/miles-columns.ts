// miles' per-token columns (docs/log-formats.md#slime-and-miles): with `--dump-details DIR`, miles
// writes `DIR/dashboard_columns/rollout_{id}.parquet` (`eval_{id}` for evaluations) through
// `save_dashboard_columns` (radixark/miles 31f1ca96 `miles/ray/rollout/debug_data.py`, polars,
// ZSTD by default): one row per sample, `sample_index`, `response_length`, `total_length`,
// `tokens`, `loss_mask` and `rollout_log_probs` (one per response token). No text, prompt, reward
// or group: read without torch (hyparquet, on the parse thread), they give the samples of the
// trajectory file of the same id (`DIR/trajectory/{id}.jsonl`, miles.ts) their confidence: the
// mean of `rollout_log_probs` over the tokens whose `loss_mask` is 1 (the policy's tokens; a
// tool's reply is masked out). `milesNativeRecords` writes the two joined as native group records.
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { promptText, milesResponse } from './miles.js';
import { readParquetColumns, rowsOf } from './parquet.js';
import { promptId } from './verl.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface MilesSampleColumns {
  responseLength: number | null;
  /** Mean of the masked `rollout_log_probs`; null when none is finite. */
  meanLogprob: number | null;
  /** The response tokens the loss counts. */
  policyTokens: number;
}

const nums = (v: unknown): number[] | null => (Array.isArray(v) ? v.map((x) => (typeof x === 'number' ? x : typeof x === 'bigint' ? Number(x) : Number.NaN)) : null);

/** The confidence of each sample of a dashboard-columns file, by `sample_index`. */
export async function readMilesColumns(file: string): Promise<Map<number, MilesSampleColumns>> {
  const t = await readParquetColumns(file, ['sample_index', 'response_length', 'loss_mask', 'rollout_log_probs']);
  for (const c of ['sample_index', 'rollout_log_probs']) if (!t.columns[c]) throw new Error(`${file}: no ${c} column (not miles' dashboard columns)`);
  const rows = rowsOf(t);
  const out = new Map<number, MilesSampleColumns>();
  for (let i = 0; i < rows.length; i++) {
    const r = rows.at(i);
    const idx = Number(r.sample_index);
    if (!Number.isInteger(idx)) continue;
    const lps = nums(r.rollout_log_probs) ?? [];
    let mask = nums(r.loss_mask);
    if (!mask || mask.length !== lps.length) mask = null;
    let sum = 0;
    let n = 0;
    for (let k = 0; k < lps.length; k++) {
      if (mask && mask[k] !== 1) continue;
      if (!Number.isFinite(lps[k])) continue;
      sum += lps[k];
      n++;
    }
    const rl = Number(r.response_length);
    out.set(idx, { responseLength: Number.isInteger(rl) ? rl : null, meanLogprob: n ? sum / n : null, policyTokens: n });
  }
  return out;
}

/** The dashboard-columns file beside a trajectory file (`trajectory/eval_3.jsonl` → `dashboard_columns/rollout_eval_3.parquet`). */
export function milesColumnsFile(trajectoryFile: string): string | undefined {
  const m = /^((?:eval_)?\d+)\.jsonl$/i.exec(basename(trajectoryFile));
  return m ? join(dirname(dirname(trajectoryFile)), 'dashboard_columns', `rollout_${m[1]}.parquet`) : undefined;
}

/**
 * A miles trajectory file as native group records (docs/contract.md#native-format), each sample's
 * `mean_logprob` from its dashboard columns where given; the same groups, ids, texts and rewards
 * as the trajectory reader (miles.ts). Complete lines only (a file being written ends mid-line).
 */
export async function milesNativeRecords(trajectoryFile: string, columns?: Map<number, MilesSampleColumns>): Promise<Obj[]> {
  const m = /^(eval_)?(\d+)\.jsonl$/i.exec(basename(trajectoryFile));
  if (!m) throw new Error(`${trajectoryFile}: not a miles trajectory file (<rollout_id>.jsonl, eval_<rollout_id>.jsonl)`);
  const step = Number(m[2]);
  const evaluation = !!m[1];
  const text = await readFile(trajectoryFile, 'utf8');
  const groups = new Map<string, Obj & { rollouts: Obj[] }>();
  const perPrompt = new Map<string, number>();
  const lines = text.split('\n');
  if (!text.endsWith('\n')) lines.pop();
  for (const line of lines) {
    if (!line.trim()) continue;
    let o: unknown;
    try {
      o = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isObj(o)) continue;
    const response = milesResponse(o);
    if (response === undefined) continue;
    const prompt = promptText(o.prompt);
    const gk = String(o.group_index);
    let g = groups.get(gk);
    if (!g) {
      const pid = promptId(prompt);
      const k = (perPrompt.get(pid) ?? 0) + 1;
      perPrompt.set(pid, k);
      // evaluations: a run of their own (`run_id`), as the trajectory reader's `…/eval`
      g = { kind: 'group', step, question_id: k === 1 ? pid : `${pid}#${k}`, prompt, ...(evaluation ? { run_id: 'eval' } : {}), rollouts: [] };
      groups.set(gk, g);
    }
    const reward = typeof o.reward === 'number' && Number.isFinite(o.reward) ? o.reward : null;
    const extra: Obj = { status: o.status, group_index: o.group_index };
    const ro: Obj = { response, extra };
    if (evaluation) extra.score = reward;
    else ro.reward = reward;
    const idx = o.sample_index;
    if (typeof idx === 'number' && Number.isInteger(idx)) {
      ro.sample_idx = idx;
      const c = columns?.get(idx);
      if (c?.meanLogprob != null) ro.mean_logprob = c.meanLogprob;
      if (c) extra.policy_tokens = c.policyTokens;
    }
    g.rollouts.push(ro);
  }
  return [...groups.values()];
}
