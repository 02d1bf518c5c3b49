/** See pyarrow-like-parquet.mjs: a table written as pandas + pyarrow write it, by hyparquet-writer. */
export function pandasToParquet(table: Record<string, unknown[]>, opts?: { rowGroupSize?: number; pandasVersion?: string }): Buffer;
