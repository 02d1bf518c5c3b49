// Writes a table the way `pandas.DataFrame(table).to_parquet(path)` does with its default engine,
// pyarrow (what TRL's GRPOTrainer.log() calls), using hyparquet-writer configured to the same
// encodings: SNAPPY compression; every column dictionary-encoded (RLE_DICTIONARY data pages after a
// PLAIN dictionary page; a dictionary that would not pay falls back to PLAIN, as pyarrow's does past
// its dictionary page limit); every column OPTIONAL (pyarrow marks pandas columns nullable), a NaN
// float written as null (from_pandas semantics); integers as INT64; strings as BYTE_ARRAY/UTF8
// (pandas 3's `large_string` and pandas 2's `string` both land on this parquet type); row groups of
// `rowGroupSize` rows (pyarrow's default is 1,048,576 rows: a TRL file of 1,024 rows is one group;
// smaller groups here exercise the multi-group path). hyparquet-writer writes data pages v2 where
// pyarrow writes v1; the real pyarrow files in test/fixtures/logs/writers/trl-1x-* cover v1.
// Also writes the `pandas` key-value metadata pandas adds (RangeIndex, column dtypes).
import { parquetWriteBuffer } from 'hyparquet-writer';

/** @param {Record<string, unknown[]>} table column name → values (numbers, bigints, strings, null/NaN) */
export function pandasToParquet(table, { rowGroupSize = 1024, pandasVersion = '2.3.3' } = {}) {
  const names = Object.keys(table);
  const n = names.length ? table[names[0]].length : 0;
  const columnData = names.map((name) => {
    const values = table[name];
    const kind = values.every((v) => v === null || typeof v === 'string') ? 'STRING' : values.every((v) => v === null || typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))) && values.some((v) => v !== null) && !values.some((v) => typeof v === 'number' && !Number.isSafeInteger(v)) && name !== 'advantage' && !/reward/.test(name) ? 'INT64' : 'DOUBLE';
    const data = values.map((v) => (kind === 'INT64' ? (v === null ? null : BigInt(v)) : kind === 'DOUBLE' ? (typeof v === 'number' && Number.isNaN(v) ? null : v) : v));
    return { name, data, type: kind, nullable: true, encoding: 'RLE_DICTIONARY' };
  });
  const pandasMeta = {
    index_columns: [{ kind: 'range', name: null, start: 0, stop: n, step: 1 }],
    column_indexes: [],
    columns: columnData.map((c) => ({ name: c.name, field_name: c.name, pandas_type: c.type === 'STRING' ? 'unicode' : c.type === 'INT64' ? 'int64' : 'float64', numpy_type: c.type === 'STRING' ? 'object' : c.type === 'INT64' ? 'int64' : 'float64', metadata: null })),
    creator: { library: 'pyarrow', version: '25.0.1' },
    pandas_version: pandasVersion,
  };
  return Buffer.from(
    parquetWriteBuffer({
      columnData,
      codec: 'SNAPPY',
      rowGroupSize,
      kvMetadata: [{ key: 'pandas', value: JSON.stringify(pandasMeta) }],
      createdBy: 'parquet-cpp-arrow version 25.0.1',
    }),
  );
}
