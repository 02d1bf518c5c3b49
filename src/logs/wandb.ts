// W&B tables on disk: every W&B run, online or offline, keeps each logged table as a file,
// `wandb/run-*/files/media/table/**/<key>_<step>_<hash>.table.json`, holding `{"columns": [...],
// "data": [[...], ...]}` (wandb's Table.to_json). Two writers are read:
//   - TRL's `completions` table (GRPOTrainer.log, TRL ≤ 0.27 logged completions only there):
//     the same columns as its completions parquet (step — a string before 1.0 —, prompt,
//     completion, one column per reward function, advantage); grouped as trl.ts groups parquet rows.
//   - verl's validation generations (`ValidationGenerationsLogger.log` for wandb): columns
//     `step, input_1, output_1, score_1, input_2, …`, one row per validation, the table re-logged
//     whole each time (every file holds the rows of all earlier validations: a group already read
//     from an earlier file is skipped silently). Samples of a row with identical input are one
//     group; the scores are against the real answer (the validation stream, no consensus reward).
// A table file is written once, so its groups are complete at once. Texts are read back by
// (row, column) from the file.
import { readFile, stat } from 'node:fs/promises';
import { errorMessage } from '../util/errors';
import { basename } from 'node:path';
import { parseStep } from './native.js';
import { pickRewardColumns, rewardNamesNearTable, trlRecords, type TrlRead } from './trl.js';
import type { Notice, ParsedRecord } from './types.js';
import { promptId } from './verl.js';

/** Tables larger than this are not read (a W&B table is capped far below it). */
const MAX_TABLE_BYTES = 512 << 20;

interface Table {
  columns: string[];
  data: unknown[][];
}

function notALog(message: string): Error {
  const e = new Error(message);
  e.name = 'NotALog';
  return e;
}

async function loadTable(file: string): Promise<Table> {
  const st = await stat(file);
  if (st.size > MAX_TABLE_BYTES) throw new Error(`larger than ${MAX_TABLE_BYTES >> 20} MB`);
  let v: unknown;
  try {
    v = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new Error(`not JSON (${errorMessage(err).slice(0, 80)})`);
  }
  const t = v as Partial<Table>;
  if (!t || typeof t !== 'object' || !Array.isArray(t.columns) || !Array.isArray(t.data)) throw notALog('not a W&B table ({"columns", "data"})');
  return { columns: t.columns.map(String), data: t.data.filter(Array.isArray) as unknown[][] };
}

function rowObject(columns: string[], row: unknown[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (let i = 0; i < columns.length; i++) o[columns[i]] = row[i];
  return o;
}

const cellText = (v: unknown): string => (typeof v === 'string' ? v : v === null || v === undefined ? '' : JSON.stringify(v));

/** Reads a W&B table file into group records. Throws when it is not a table we read. */
export async function readWandbTable(file: string, run: string | undefined): Promise<TrlRead> {
  const t = await loadTable(file);
  const notices: Notice[] = [];
  const m = /_(\d+)_[0-9a-f]+\.table\.json$/i.exec(basename(file));
  const fileStep = m ? Number(m[1]) : 0;
  if (t.columns.includes('prompt') && t.columns.includes('completion')) {
    // One row object at a time (a whole table of them cost several times the table's size).
    const rows = { length: t.data.length, at: (r: number) => rowObject(t.columns, t.data[r]) };
    const after = t.columns.slice(t.columns.indexOf('completion') + 1).filter((c) => c !== 'advantage' && c !== 'images' && c !== 'image');
    const known = await rewardNamesNearTable(file);
    // TRL before 1.0 had no log_extra: every column between completion and advantage is a reward
    const picked = known || t.columns.includes('mode') ? pickRewardColumns(after, known) : { columns: after };
    if (picked.why) notices.push({ level: 'warning', message: `${file}: ${picked.why}`, file });
    const ci = t.columns.indexOf('completion');
    const records = trlRecords({ file, run, fileStep, names: t.columns, rows, rewardColumns: picked.columns });
    for (const r of records) if (r.kind === 'group') for (const ro of r.rollouts) (ro.source as { item?: number }).item = ci;
    return { records, rows: rows.length, rewardColumns: picked.columns, format: 'wandb', what: 'W&B completions table', notices };
  }
  // Column positions looked up once (a lookup per cell made a wide table quadratic in its columns).
  const colIndex = new Map<string, number>();
  t.columns.forEach((c, i) => colIndex.has(c) || colIndex.set(c, i));
  const inputs = t.columns
    .map((c, i) => [c, i] as const)
    .filter(([c]) => /^input_\d+$/.test(c))
    .map(([c, i]) => {
      const k = c.slice('input_'.length);
      return { i, oi: colIndex.get(`output_${k}`) ?? -1, si: colIndex.get(`score_${k}`) ?? -1 };
    });
  if (inputs.length && colIndex.has('step')) {
    const stepCol = colIndex.get('step')!;
    const records: ParsedRecord[] = [];
    t.data.forEach((row, r) => {
      const step = parseStep(row[stepCol]) ?? fileStep;
      const byPrompt = new Map<string, Extract<ParsedRecord, { kind: 'group' }>>();
      for (const { i, oi, si } of inputs) {
        if (oi < 0) continue;
        const prompt = cellText(row[i]);
        let g = byPrompt.get(prompt);
        if (!g) {
          g = { kind: 'group', run, step, questionId: promptId(prompt), prompt, stream: 'validation', framework: 'verl', rollouts: [], source: { file, line: r + 1, offset: 0, length: 0 } };
          byPrompt.set(prompt, g);
          records.push(g);
        }
        const score = si >= 0 && typeof row[si] === 'number' ? (row[si] as number) : null;
        g.rollouts.push({ response: cellText(row[oi]), meanLogprob: null, reward: null, source: { file, line: r + 1, offset: 0, length: 0, item: oi } as ParsedRecord['source'], extra: { score } });
      }
    });
    return { records, rows: t.data.length, rewardColumns: [], format: 'wandb', what: 'W&B validation generations table', notices };
  }
  throw notALog(`a W&B table with columns ${t.columns.slice(0, 6).join(', ')}${t.columns.length > 6 ? ', …' : ''}: neither TRL's completions nor verl's validation generations`);
}

let cache: { file: string; mtimeMs: number; size: number; data: unknown[][] } | undefined;

/** The text in (0-based `row`, `col`) of a W&B table file (the last file read is cached). */
export async function readTableCell(file: string, row: number, col: number): Promise<string> {
  const st = await stat(file);
  if (!cache || cache.file !== file || cache.mtimeMs !== st.mtimeMs || cache.size !== st.size) {
    const t = await loadTable(file);
    cache = { file, mtimeMs: st.mtimeMs, size: st.size, data: t.data };
  }
  const r = cache.data[row];
  if (!r || col >= r.length) throw new Error(`${file}: row ${row + 1} no longer exists`);
  return cellText(r[col]);
}
