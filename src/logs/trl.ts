// TRL GRPOTrainer completions (docs/contract.md#framework-logs): `<output_dir>/completions/completions_{step:05d}.parquet`
// (TRL ≥ 1.x: `completions/{train,eval}/…` with a leading `mode` column), written by
// `pd.DataFrame(table).to_parquet()` from `{step, prompt, completion, **rewards, **extra, advantage}`:
// one column per reward function (named after it, in the trainer's order), then the `log_extra`
// columns (sorted by name), then `advantage`. The file keeps no boundary between the reward columns
// and the extras, so the reward columns are taken from what TRL itself records about the run: the
// `rewards/<name>/mean` (older: `rewards/<name>`) metric keys of `trainer_state.json` (in output_dir
// or its newest checkpoint-*), or the W&B run's `wandb-summary.json` (`train/rewards/<name>/mean`).
// Without either, a single candidate column is the reward; with several the logged reward is left
// missing and a notice says why (an extra such as a token count must never be summed into it).
// A group is a run of consecutive rows with identical `prompt`. The logged reward is the sum of the
// reward columns (TRL's default equal weights, NaN-skipping like its nansum); every other column
// is kept in the roll-out's `extra`. Older TRL (≤ 0.2x) wrote only step/prompt/completion.
// Self-certainty and token entropy (confidence.ts): the `log_extra` columns `cl_self_certainty`,
// `cl_entropy` (consensus_lens.trl with its confidence_trainer), `cl_token_entropies` when a list
// column holds them; never reward columns (a plain `entropy` column is a reward function's own extra).
// Read with hyparquet (a maintained pure-JS parquet reader), checked first and parsed in a worker
// thread with a bounded heap (parquet.ts). A parquet file is written in one go,
// so its groups are complete once the file parses; a file that does not parse yet (being written)
// is retried by the tail.
import { readFile, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { readParquetColumns, rowsOf } from './parquet.js';
import { parseStep } from './native.js';
import type { Notice, ParsedRecord } from './log-types.js';
import { COLUMN_CONFIDENCE_KEYS, assignConfidence, confidenceKeyNames, readConfidence } from './confidence-fields.js';
import type { Rollout } from '../engine';
import { promptId } from './verl.js';

const FIXED = new Set(['mode', 'step', 'prompt', 'completion', 'advantage', 'image', 'images', 'index']);
/** Columns read as the roll-out's self-certainty and entropies: never a reward, never an extra. */
const CONFIDENCE_COLUMNS = confidenceKeyNames(COLUMN_CONFIDENCE_KEYS);

function toText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) {
    // conversational form: a list of {role, content} messages; the completion is the last content
    const last = v[v.length - 1] as { content?: unknown } | undefined;
    if (v.every((m) => typeof m === 'object' && m !== null && 'content' in m)) {
      return v.length === 1 && typeof last?.content === 'string' ? last.content : JSON.stringify(v);
    }
  }
  return typeof v === 'object' ? JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? Number(x) : x)) : String(v);
}

function toNumber(v: unknown): number | null {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return null;
}

export interface TrlRead {
  records: ParsedRecord[];
  rows: number;
  rewardColumns: string[];
  format: 'trl' | 'wandb';
  what: string;
  notices: Notice[];
}

/** Reward-function names recorded for the W&B run whose media/table folder holds `file`. */
export async function rewardNamesNearTable(file: string): Promise<Set<string> | undefined> {
  // wandb/run-*/files/media/table/[sub/]x.table.json: wandb-summary.json is in files/
  let dir = dirname(file);
  for (let up = 0; up < 4; up++) {
    if (basename(dir) === 'files') return rewardNamesIn(dir);
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}

/** Reward-function names TRL recorded for the run whose completions folder holds `file`. */
async function rewardNamesNear(file: string): Promise<Set<string> | undefined> {
  // completions/<file> or completions/<mode>/<file>: output_dir is one or two levels up
  let dir = dirname(file);
  for (let up = 0; up < 3; up++) {
    const names = await rewardNamesIn(dir);
    if (names) return names;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}

async function readJson(path: string, maxBytes: number): Promise<unknown> {
  try {
    const st = await stat(path);
    if (!st.isFile() || st.size > maxBytes) return undefined;
    return JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return undefined;
  }
}

function namesFromKeys(keys: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const k of keys) {
    const m = /^(?:train\/|eval\/)?rewards\/(.+?)(?:\/(?:mean|std))?$/.exec(k);
    if (m) out.add(m[1]);
  }
  return out;
}

async function rewardNamesIn(dir: string): Promise<Set<string> | undefined> {
  const candidates = [join(dir, 'trainer_state.json')];
  try {
    const cks = (await readdir(dir)).filter((n) => /^checkpoint-\d+$/.test(n)).sort((a, b) => Number(b.slice(11)) - Number(a.slice(11)));
    if (cks.length) candidates.push(join(dir, cks[0], 'trainer_state.json'));
  } catch {
    return undefined;
  }
  for (const c of candidates) {
    const st = (await readJson(c, 64 << 20)) as { log_history?: Array<Record<string, unknown>> } | undefined;
    if (!st || !Array.isArray(st.log_history)) continue;
    const names = namesFromKeys(st.log_history.flatMap((h) => (h && typeof h === 'object' ? Object.keys(h) : [])));
    if (names.size) return names;
  }
  const summary = (await readJson(join(dir, 'wandb-summary.json'), 16 << 20)) as Record<string, unknown> | undefined;
  if (summary && typeof summary === 'object') {
    const names = namesFromKeys(Object.keys(summary));
    if (names.size) return names;
  }
  return undefined;
}

/** A column name that reads as a reward function's (TRL names the column after the function). */
const REWARD_NAME = /reward|score|correct|accura|format|\brm\b|_rm$|verif|match/i;

/**
 * The reward columns among `candidates` (the columns after `completion` other than `advantage`, in
 * file order): those TRL recorded as reward functions when it did; else the leading columns whose
 * names read as reward functions (the extras come after the rewards, so the rewards are a prefix),
 * at least the first; `why` explains a guess that left columns out.
 */
export function pickRewardColumns(all: string[], known: Set<string> | undefined): { columns: string[]; why?: string } {
  const candidates = all.filter((c) => !CONFIDENCE_COLUMNS.has(c));
  if (known) return { columns: candidates.filter((c) => known.has(c)) };
  if (candidates.length <= 1) return { columns: candidates };
  let k = 0;
  while (k < candidates.length && REWARD_NAME.test(candidates[k])) k++;
  if (k === 0) k = 1;
  const columns = candidates.slice(0, k);
  if (k === candidates.length) return { columns };
  return {
    columns,
    why: `reward columns taken as ${columns.join(', ')} by their names; ${candidates.slice(k).join(', ')} read as log_extra columns and are not summed (no trainer_state.json or wandb-summary.json names the reward functions)`,
  };
}

export interface TrlRowsInput {
  file: string;
  run: string | undefined;
  fileStep: number;
  names: string[];
  /** The rows, one object at a time (a reader need not hold them all as objects). */
  rows: { length: number; at(i: number): Record<string, unknown> };
  rewardColumns: string[];
  /** Line numbers / sources are rows (1-based) of this file. */
}

/** Groups TRL rows (parquet or a W&B `completions` table) into group records. */
export function trlRecords(inp: TrlRowsInput): ParsedRecord[] {
  const { file, run, fileStep, rows, rewardColumns } = inp;
  const keep = inp.names.filter((n) => !FIXED.has(n) && !CONFIDENCE_COLUMNS.has(n));
  const records: ParsedRecord[] = [];
  const seen = new Map<string, number>();
  let cur: Extract<ParsedRecord, { kind: 'group' }> | undefined;
  let curPrompt: string | undefined;
  for (let i = 0; i < rows.length; i++) {
    const r = rows.at(i);
    const stepV = r.step;
    const step = parseStep(typeof stepV === 'bigint' ? Number(stepV) : stepV) ?? fileStep;
    const prompt = toText(r.prompt);
    if (!cur || prompt !== curPrompt || step !== cur.step) {
      const pid = promptId(prompt);
      const k = `${step}\0${pid}`;
      const n = (seen.get(k) ?? 0) + 1;
      seen.set(k, n);
      cur = {
        kind: 'group',
        run,
        step,
        questionId: n === 1 ? pid : `${pid}#${n}`,
        prompt,
        framework: 'trl',
        rollouts: [],
        source: { file, line: i + 1, offset: 0, length: 0 },
      };
      if (r.mode === 'eval') cur.stream = 'validation';
      curPrompt = prompt;
      records.push(cur);
    }
    let sum = 0;
    let any = false;
    const extra: Record<string, unknown> = {};
    for (const c of rewardColumns) {
      const v = toNumber(r[c]);
      if (v !== null) {
        sum += v;
        any = true;
      }
    }
    for (const c of keep) extra[c] = typeof r[c] === 'bigint' ? Number(r[c]) : r[c];
    const advantage = 'advantage' in r ? toNumber(r.advantage) : undefined;
    if (advantage !== undefined) extra.advantage = advantage;
    const rollout: Rollout & { extra?: Record<string, unknown> } = {
      response: toText(r.completion),
      meanLogprob: null,
      reward: any ? sum : null,
      ...(advantage !== undefined ? { advantage } : {}),
      source: { file, line: i + 1, offset: 0, length: 0 },
      extra,
    };
    assignConfidence(rollout, readConfidence(r, COLUMN_CONFIDENCE_KEYS, []));
    cur.rollouts.push(rollout);
  }
  return records;
}

/** Reads a TRL completions parquet file into group records. Throws when it is not one. */
export async function readTrlFile(file: string, run: string | undefined): Promise<TrlRead> {
  const table = await readParquetColumns(file);
  const names = table.names;
  if (!names.includes('prompt') || !names.includes('completion')) {
    throw new Error(`parquet file without "prompt" and "completion" columns (columns: ${names.join(', ')})`);
  }
  const rows = rowsOf(table);
  const m = /(\d+)\.parquet$/i.exec(basename(file));
  const fileStep = m ? Number(m[1]) : 0;
  const after = names.slice(names.indexOf('completion') + 1).filter((n) => !FIXED.has(n) && !CONFIDENCE_COLUMNS.has(n));
  const picked = pickRewardColumns(after, after.length > 1 ? await rewardNamesNear(file) : undefined);
  const notices: Notice[] = picked.why ? [{ level: 'warning', message: `${file}: ${picked.why}`, file }] : [];
  const records = trlRecords({ file, run, fileStep, names, rows, rewardColumns: picked.columns });
  return { records, rows: rows.length, rewardColumns: picked.columns, format: 'trl', what: 'TRL completions file', notices };
}

let cache: { file: string; mtimeMs: number; size: number; completions: string[] } | undefined;

/** The completion text of 0-based `row` of a TRL parquet file (the last file read is cached). */
export async function readTrlCompletion(file: string, row: number): Promise<string> {
  const st = await stat(file);
  if (!cache || cache.file !== file || cache.mtimeMs !== st.mtimeMs || cache.size !== st.size) {
    const t = await readParquetColumns(file, ['completion']);
    const c = t.columns.completion;
    if (!c) throw new Error(`${file}: no "completion" column`);
    cache = { file, mtimeMs: st.mtimeMs, size: st.size, completions: Array.from(c.idx, (k) => toText(c.uniq[k])) };
  }
  if (row < 0 || row >= cache.completions.length) throw new Error(`${file}: row ${row + 1} no longer exists`);
  return cache.completions[row];
}
