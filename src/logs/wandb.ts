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
// (row, column) from the file. Tables are read column by column from their bytes on the parse
// thread (json-table.ts, parquet.ts), never JSON.parse'd whole on the asking thread.
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { parseStep } from './native.js';
import { cellAt, type TableCells } from './json-table.js';
import { readWandbColumns } from './parquet.js';
import { rewardNamesNearTable, trlRecords, type TrlRead } from './trl.js';
import type { Notice, ParsedRecord } from './log-types.js';
import { promptId } from './verl.js';

function notALog(message: string): Error {
  const e = new Error(message);
  e.name = 'NotALog';
  return e;
}

const cellText = (v: unknown): string => (typeof v === 'string' ? v : v === null || v === undefined ? '' : JSON.stringify(v));

/** Rows of the columns read, one object at a time. */
function rowsOf(t: TableCells): { length: number; at(i: number): Record<string, unknown> } {
  return {
    length: t.rows,
    at(r) {
      const row: Record<string, unknown> = {};
      t.names.forEach((n, c) => (row[n] = cellAt(t, r, c)));
      return row;
    },
  };
}

/**
 * Reads a W&B table file into group records. Throws when it is not a table we read. The table is
 * read on the parse thread (parquet.ts), only the columns the views use (json-table.ts): TRL's
 * step, mode, prompt, completion, advantage and reward columns (its log_extra columns stay in the
 * file), verl's step, inputs, outputs and scores; at most 2^24 cells.
 */
export async function readWandbTable(file: string, run: string | undefined): Promise<TrlRead> {
  const notices: Notice[] = [];
  const m = /_(\d+)_[0-9a-f]+\.table\.json$/i.exec(basename(file));
  const fileStep = m ? Number(m[1]) : 0;
  const known = await rewardNamesNearTable(file);
  const t = await readWandbColumns({ file, known: known ? [...known] : undefined });
  if (t.kind === 'trl') {
    const { table, picked } = t;
    if (picked.why) notices.push({ level: 'warning', message: `${file}: ${picked.why}`, file });
    const ci = t.names.indexOf('completion');
    // one row object at a time (a whole table of them cost several times the table's size)
    const rows = rowsOf(table);
    const records = trlRecords({ file, run, fileStep, names: table.names, rows, rewardColumns: picked.columns });
    for (const r of records) if (r.kind === 'group') for (const ro of r.rollouts) (ro.source as { item?: number }).item = ci;
    return { records, rows: rows.length, rewardColumns: picked.columns, format: 'wandb', what: 'W&B completions table', notices };
  }
  if (t.kind === 'verl') {
    const { table } = t;
    // positions in the file and in the columns read, looked up once (an indexOf per column is
    // quadratic in a wide table)
    const first = new Map<string, number>();
    t.names.forEach((n, i) => first.has(n) || first.set(n, i));
    const read = new Map<string, number>();
    table.names.forEach((n, c) => read.set(n, c));
    const at = (name: string) => first.get(name) ?? -1;
    const cell = (name: string, r: number): unknown => {
      const c = read.get(name);
      return c === undefined ? undefined : cellAt(table, r, c);
    };
    const inputs = table.names
      .filter((c) => /^input_\d+$/.test(c))
      .map((c) => {
        const k = c.slice('input_'.length);
        return { input: c, output: `output_${k}`, score: `score_${k}`, oi: at(`output_${k}`) };
      });
    const records: ParsedRecord[] = [];
    for (let r = 0; r < table.rows; r++) {
      const step = parseStep(cell('step', r)) ?? fileStep;
      const byPrompt = new Map<string, Extract<ParsedRecord, { kind: 'group' }>>();
      for (const { input, output, score: sc, oi } of inputs) {
        if (oi < 0) continue;
        const prompt = cellText(cell(input, r));
        let g = byPrompt.get(prompt);
        if (!g) {
          g = { kind: 'group', run, step, questionId: promptId(prompt), prompt, stream: 'validation', framework: 'verl', rollouts: [], source: { file, line: r + 1, offset: 0, length: 0 } };
          byPrompt.set(prompt, g);
          records.push(g);
        }
        const sv = cell(sc, r);
        const score = typeof sv === 'number' ? sv : null;
        g.rollouts.push({ response: cellText(cell(output, r)), meanLogprob: null, reward: null, source: { file, line: r + 1, offset: 0, length: 0, item: oi } as ParsedRecord['source'], extra: { score } });
      }
    }
    return { records, rows: table.rows, rewardColumns: [], format: 'wandb', what: 'W&B validation generations table', notices };
  }
  throw notALog(`a W&B table with columns ${t.names.slice(0, 6).join(', ')}${t.names.length > 6 ? ', …' : ''}: neither TRL's completions nor verl's validation generations`);
}

let cache: { file: string; mtimeMs: number; size: number; col: number; texts: string[] } | undefined;

/** The text in (0-based `row`, `col`) of a W&B table file (the column last read is cached). */
export async function readTableCell(file: string, row: number, col: number): Promise<string> {
  const st = await stat(file);
  if (!cache || cache.file !== file || cache.col !== col || cache.mtimeMs !== st.mtimeMs || cache.size !== st.size) {
    const t = await readWandbColumns({ file, column: col });
    const table = t.table;
    if (table?.names.length !== 1) throw new Error(`${file}: column ${col + 1} no longer exists`);
    cache = { file, mtimeMs: st.mtimeMs, size: st.size, col, texts: Array.from({ length: table.rows }, (_, r) => cellText(cellAt(table, r, 0))) };
  }
  if (row < 0 || row >= cache.texts.length) throw new Error(`${file}: row ${row + 1} no longer exists`);
  return cache.texts[row];
}
