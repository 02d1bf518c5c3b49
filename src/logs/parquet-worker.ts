// The parse thread (parquet.ts): reads a parquet file, checks it (`checkParquet`), decodes the
// asked columns with hyparquet and sends each column once, repeated strings once; reads the
// columns a W&B table's reader uses (json-table.ts) the same way, off the asking thread.
import { readFile, stat } from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import { parquetReadObjects } from 'hyparquet';
import { readTableColumns, tableShape } from './json-table.js';
import { PARQUET_LIMITS, TRL_READ, WANDB_MAX_TABLE_BYTES, checkParquet, zstdPage, type ParquetColumn, type ParquetColumns, type WandbAsk, type WandbTable } from './parquet.js';
import { pickRewardColumns } from './trl.js';

async function parse(file: string, columns: string[] | undefined): Promise<ParquetColumns> {
  const buf = await readFile(file);
  if (buf.length > PARQUET_LIMITS.maxFileBytes) throw new Error(`larger than ${PARQUET_LIMITS.maxFileBytes >> 20} MB`);
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
  const meta = checkParquet(ab, columns);
  const names = topNames(meta.schema);
  const want = columns ? names.filter((n) => columns.includes(n)) : names;
  const rows = want.length ? ((await parquetReadObjects({ file: ab, metadata: meta, columns: want, compressors: { ZSTD: zstdPage } })) as Array<Record<string, unknown>>) : [];
  const out: Record<string, ParquetColumn> = {};
  for (const name of want) {
    const uniq: unknown[] = [];
    const seen = new Map<unknown, number>();
    const idx = new Int32Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const v = rows[i][name];
      if (typeof v === 'object' && v !== null) {
        idx[i] = uniq.push(v) - 1;
        continue;
      }
      let k = seen.get(v);
      if (k === undefined) {
        k = uniq.push(v) - 1;
        seen.set(v, k);
      }
      idx[i] = k;
    }
    out[name] = { uniq, idx };
  }
  return { names, rows: rows.length, columns: out };
}

/** Names of the schema's top-level fields. */
function topNames(schema: Array<{ name: string; num_children?: number }>): string[] {
  const out: string[] = [];
  let i = 1;
  const skip = (): void => {
    const n = schema[i++]?.num_children ?? 0;
    for (let k = 0; k < n && i < schema.length; k++) skip();
  };
  while (i < schema.length) {
    out.push(schema[i].name);
    skip();
  }
  return out;
}

/** The W&B table reader (wandb.ts): the columns it uses, read from the file's bytes (json-table.ts). */
async function wandb(m: WandbAsk): Promise<WandbTable> {
  const st = await stat(m.file);
  if (st.size > WANDB_MAX_TABLE_BYTES) throw new Error(`larger than ${WANDB_MAX_TABLE_BYTES >> 20} MB`);
  const buf = await readFile(m.file);
  const shape = tableShape(buf);
  const names = shape.names;
  const cells = (want: string[]) => readTableColumns(buf, shape, want, PARQUET_LIMITS.maxValues);
  if (m.column !== undefined) return { kind: 'cells', names, table: cells([names[m.column] ?? '']) };
  if (names.includes('prompt') && names.includes('completion')) {
    const after = names.slice(names.indexOf('completion') + 1).filter((c) => c !== 'advantage' && c !== 'images' && c !== 'image');
    const known = m.known ? new Set(m.known) : undefined;
    // TRL before 1.0 had no log_extra: every column between completion and advantage is a reward
    const picked = known || names.includes('mode') ? pickRewardColumns(after, known) : { columns: after };
    // only what the views use: the log_extra columns are left in the file
    const rewards = new Set(picked.columns);
    const want = names.filter((n) => TRL_READ.has(n) || rewards.has(n));
    return { kind: 'trl', names, picked, table: cells(want) };
  }
  const inputs = names.filter((c) => /^input_\d+$/.test(c));
  if (inputs.length && names.includes('step')) {
    const want = names.filter((c) => c === 'step' || /^(input|output|score)_\d+$/.test(c));
    return { kind: 'verl', names, table: cells(want) };
  }
  return { kind: 'none', names };
}

const transfers = (t: ParquetColumns): ArrayBuffer[] => Object.values(t.columns).map((c) => c.idx.buffer as ArrayBuffer);

parentPort!.on('message', (m: { seq: number; file: string; columns?: string[]; wandb?: WandbAsk }) => {
  if (m.wandb) {
    wandb(m.wandb).then(
      (value) => parentPort!.postMessage({ seq: m.seq, value }, value.table ? [value.table.cells.buffer as ArrayBuffer] : []),
      (err: Error) => parentPort!.postMessage({ seq: m.seq, error: err.message, name: err.name }),
    );
    return;
  }
  parse(m.file, m.columns).then(
    (value) => parentPort!.postMessage({ seq: m.seq, value }, transfers(value)),
    (err: Error) => parentPort!.postMessage({ seq: m.seq, error: err.message }),
  );
});
