// TRL GRPOTrainer completions (SPEC §2.2): `<output_dir>/completions/completions_{step:05d}.parquet`
// with columns `step`, `prompt`, `completion`, one column per reward function, `advantage`.
// A group is a run of consecutive rows with identical `prompt`. The logged reward is the sum of the
// reward-function columns (TRL's default equal weights, NaN-skipping like its nansum); the
// per-function values and the advantage are kept in the roll-out's `extra`.
// Read with hyparquet (a maintained pure-JS parquet reader). A parquet file is written in one go,
// so its groups are complete once the file parses; a file that does not parse yet (being written)
// is retried by the tail.
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { parseStep } from './native.js';
import type { ParsedRecord } from './types.js';
import { promptId } from './verl.js';

const NON_REWARD = new Set(['step', 'prompt', 'completion', 'advantage', 'image', 'images', 'index']);

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

function arrayBufferOf(buf: Buffer): ArrayBuffer {
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
}

export interface TrlRead {
  records: ParsedRecord[];
  rows: number;
  rewardColumns: string[];
}

/** Reads a TRL completions parquet file into group records. Throws when it is not one. */
export async function readTrlFile(file: string, run: string | undefined): Promise<TrlRead> {
  const ab = arrayBufferOf(await readFile(file));
  const meta = parquetMetadata(ab);
  const names = meta.schema.slice(1).map((s) => s.name);
  if (!names.includes('prompt') || !names.includes('completion')) {
    throw new Error(`parquet file without "prompt" and "completion" columns (columns: ${names.join(', ')})`);
  }
  const rows = (await parquetReadObjects({ file: ab, metadata: meta })) as Array<Record<string, unknown>>;
  const m = /(\d+)\.parquet$/i.exec(basename(file));
  const fileStep = m ? Number(m[1]) : 0;
  const rewardColumns = names.filter((n) => !NON_REWARD.has(n) && rows.some((r) => toNumber(r[n]) !== null || r[n] === null));
  const records: ParsedRecord[] = [];
  const seen = new Map<string, number>();
  let cur: Extract<ParsedRecord, { kind: 'group' }> | undefined;
  let curPrompt: string | undefined;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
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
        rollouts: [],
        source: { file, line: i + 1, offset: 0, length: 0 },
      };
      curPrompt = prompt;
      records.push(cur);
    }
    let sum = 0;
    let any = false;
    const extra: Record<string, unknown> = {};
    for (const c of rewardColumns) {
      const v = toNumber(r[c]);
      extra[c] = v;
      if (v !== null) {
        sum += v;
        any = true;
      }
    }
    if ('advantage' in r) extra.advantage = toNumber(r.advantage);
    cur.rollouts.push({
      response: toText(r.completion),
      meanLogprob: null,
      reward: any ? sum : null,
      source: { file, line: i + 1, offset: 0, length: 0 },
      extra,
    });
  }
  return { records, rows: rows.length, rewardColumns };
}

let cache: { file: string; mtimeMs: number; size: number; completions: string[] } | undefined;

/** The completion text of 0-based `row` of a TRL parquet file (the last file read is cached). */
export async function readTrlCompletion(file: string, row: number): Promise<string> {
  const st = await stat(file);
  if (!cache || cache.file !== file || cache.mtimeMs !== st.mtimeMs || cache.size !== st.size) {
    const ab = arrayBufferOf(await readFile(file));
    const rows = (await parquetReadObjects({ file: ab, columns: ['completion'] })) as Array<Record<string, unknown>>;
    cache = { file, mtimeMs: st.mtimeMs, size: st.size, completions: rows.map((r) => toText(r.completion)) };
  }
  if (row < 0 || row >= cache.completions.length) throw new Error(`${file}: row ${row + 1} no longer exists`);
  return cache.completions[row];
}
