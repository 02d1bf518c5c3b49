// Parquet files written byte by byte (Thrift compact protocol), so a test can declare what a real
// writer never would: a page of 10^8 values in one RLE run, offsets past the end of the file.
// Columns are flat OPTIONAL BYTE_ARRAY (UTF8) columns, uncompressed, PLAIN values.

type Field = [id: number, kind: 'i32' | 'i64' | 'bin' | 'struct' | 'list-i32' | 'list-bin' | 'list-struct', value: unknown];

function varint(n: bigint, out: number[]): void {
  let v = n;
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
}
const zigzag = (n: bigint): bigint => (n >= 0n ? n << 1n : (-n << 1n) - 1n);
const TYPE = { i32: 5, i64: 6, bin: 8, list: 9, struct: 12 } as const;

function listHeader(size: number, elem: number, out: number[]): void {
  if (size < 15) out.push((size << 4) | elem);
  else {
    out.push(0xf0 | elem);
    varint(BigInt(size), out);
  }
}

function writeBin(v: string | Uint8Array, out: number[]): void {
  const b = typeof v === 'string' ? new TextEncoder().encode(v) : v;
  varint(BigInt(b.length), out);
  for (const x of b) out.push(x);
}

/** A Thrift compact-protocol struct of `fields` (ids ascending). */
export function struct(fields: Field[], out: number[] = []): number[] {
  let last = 0;
  for (const [id, kind, value] of fields) {
    const t = kind === 'i32' ? TYPE.i32 : kind === 'i64' ? TYPE.i64 : kind === 'bin' ? TYPE.bin : kind === 'struct' ? TYPE.struct : TYPE.list;
    if (id - last > 0 && id - last <= 15) out.push(((id - last) << 4) | t);
    else {
      out.push(t);
      varint(zigzag(BigInt(id)), out);
    }
    last = id;
    if (kind === 'i32' || kind === 'i64') varint(zigzag(BigInt(value as number | bigint)), out);
    else if (kind === 'bin') writeBin(value as string, out);
    else if (kind === 'struct') struct(value as Field[], out);
    else if (kind === 'list-i32') {
      const xs = value as number[];
      listHeader(xs.length, TYPE.i32, out);
      for (const x of xs) varint(zigzag(BigInt(x)), out);
    } else if (kind === 'list-bin') {
      const xs = value as string[];
      listHeader(xs.length, TYPE.bin, out);
      for (const x of xs) writeBin(x, out);
    } else {
      const xs = value as Field[][];
      listHeader(xs.length, TYPE.struct, out);
      for (const x of xs) struct(x, out);
    }
  }
  out.push(0);
  return out;
}

/** The RLE/bit-packed hybrid stream of one RLE run: `count` copies of `value` (bit width ≤ 8). */
export function rleRun(count: number, value: number): number[] {
  const out: number[] = [];
  varint(BigInt(count) << 1n, out);
  out.push(value);
  return out;
}

function u32(n: number): number[] {
  return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];
}

export interface CraftColumn {
  name: string;
  /** Declared values of the data page (default: the strings' count). */
  numValues?: number;
  /** The definition levels' RLE stream (default: one run of 1s over the values). */
  levels?: number[];
  values: string[];
  /** Added to the data page offset written in the footer (to point past the end of the file). */
  offsetShift?: number;
  /**
   * Dictionary-encoded instead (as pyarrow writes): a PLAIN dictionary page of these entries, and
   * a data page whose values are `indices` (an RLE/bit-packed stream of 8-bit indices).
   */
  dictionary?: { entries: string[]; indices: number[] };
}

/** A parquet file with one row group of `numRows` rows and the given columns. */
export function craftParquet(columns: CraftColumn[], numRows: number): Uint8Array {
  const bytes: number[] = [...new TextEncoder().encode('PAR1')];
  const chunks: Field[][] = [];
  for (const c of columns) {
    const n = c.numValues ?? c.values.length;
    const levels = c.levels ?? rleRun(c.values.length, 1);
    const body: number[] = [...u32(levels.length), ...levels];
    const plain = (vs: string[], out: number[]): void => {
      for (const v of vs) {
        const b = new TextEncoder().encode(v);
        out.push(...u32(b.length), ...b);
      }
    };
    const chunkStart = bytes.length;
    let dictOffset: number | undefined;
    if (c.dictionary) {
      const dict: number[] = [];
      plain(c.dictionary.entries, dict);
      const dh = struct([
        [1, 'i32', 2],
        [2, 'i32', dict.length],
        [3, 'i32', dict.length],
        [7, 'struct', [[1, 'i32', c.dictionary.entries.length], [2, 'i32', 0]] as Field[]],
      ]);
      dictOffset = bytes.length;
      for (const x of dh) bytes.push(x);
      for (const x of dict) bytes.push(x);
      body.push(8, ...c.dictionary.indices);
    } else plain(c.values, body);
    const header = struct([
      [1, 'i32', 0],
      [2, 'i32', body.length],
      [3, 'i32', body.length],
      [5, 'struct', [[1, 'i32', n], [2, 'i32', c.dictionary ? 8 : 0], [3, 'i32', 3], [4, 'i32', 3]] as Field[]],
    ]);
    const offset = bytes.length;
    bytes.push(...header, ...body);
    const chunkBytes = bytes.length - chunkStart;
    chunks.push([
      [2, 'i64', (dictOffset ?? offset) + (c.offsetShift ?? 0)],
      [
        3,
        'struct',
        [
          [1, 'i32', 6],
          [2, 'list-i32', [0, 3]],
          [3, 'list-bin', [c.name]],
          [4, 'i32', 0],
          [5, 'i64', n],
          [6, 'i64', chunkBytes],
          [7, 'i64', chunkBytes],
          [9, 'i64', offset + (c.offsetShift ?? 0)],
          ...(dictOffset !== undefined ? ([[11, 'i64', dictOffset]] as Field[]) : []),
        ] as Field[],
      ],
    ]);
  }
  const schema: Field[][] = [
    [[4, 'bin', 'schema'], [5, 'i32', columns.length]],
    ...columns.map((c): Field[] => [[1, 'i32', 6], [3, 'i32', 1], [4, 'bin', c.name], [6, 'i32', 0]]),
  ];
  const footer = struct([
    [1, 'i32', 1],
    [2, 'list-struct', schema],
    [3, 'i64', numRows],
    [4, 'list-struct', [[[1, 'list-struct', chunks], [2, 'i64', 0], [3, 'i64', numRows]]]],
  ]);
  bytes.push(...footer, ...u32(footer.length), ...new TextEncoder().encode('PAR1'));
  return Uint8Array.from(bytes);
}
