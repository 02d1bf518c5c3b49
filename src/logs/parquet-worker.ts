// The parquet parse thread (parquet.ts): reads a file, checks it (`checkParquet`), decodes the
// asked columns with hyparquet and sends each column once, repeated strings once.
import { readFile } from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import { parquetReadObjects } from 'hyparquet';
import { PARQUET_LIMITS, checkParquet, type ParquetColumn, type ParquetColumns } from './parquet.js';

async function parse(file: string, columns: string[] | undefined): Promise<ParquetColumns> {
  const buf = await readFile(file);
  if (buf.length > PARQUET_LIMITS.maxFileBytes) throw new Error(`larger than ${PARQUET_LIMITS.maxFileBytes >> 20} MB`);
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
  const meta = checkParquet(ab, columns);
  const names = topNames(meta.schema);
  const want = columns ? names.filter((n) => columns.includes(n)) : names;
  const rows = want.length ? ((await parquetReadObjects({ file: ab, metadata: meta, columns: want })) as Array<Record<string, unknown>>) : [];
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

parentPort!.on('message', (m: { seq: number; file: string; columns?: string[] }) => {
  parse(m.file, m.columns).then(
    (value) => parentPort!.postMessage({ seq: m.seq, value }, Object.values(value.columns).map((c) => c.idx.buffer as ArrayBuffer)),
    (err: Error) => parentPort!.postMessage({ seq: m.seq, error: err.message }),
  );
});
