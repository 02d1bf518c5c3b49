// A W&B table file (`{"columns": [...], "data": [[...], ...]}`) read column by column from its
// bytes, without `JSON.parse` of the whole file: parsing a 311 MB table made ~14–30× its size of
// heap objects (an array per row, a value per cell) and aborted the extension host. Here the file
// stays one Buffer (outside the heap); the top-level object is walked for the byte ranges of its
// "columns" and "data" values; then each row's cells are stepped over, and only the cells of the
// asked columns are parsed (each alone), kept as indices into one list of values, repeated values
// once (`TableCells`). At most `maxCells` cells (rows × asked columns) are read: a larger table
// is an error naming the bound, not an exhausted heap.
// Malformed JSON anywhere (an unterminated string, an unbalanced bracket) is an error; NaN and
// ±Infinity tokens (Python's json.dumps writes them) are read as missing (null).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;
const COLON = 0x3a;

function bad(what: string, at: number): never {
  throw new Error(`not JSON (${what} at byte ${at})`);
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(b: Buffer, at: number, end: number): number {
  while (at < end && isSpace(b[at])) at++;
  return at;
}

/** The end of the string starting at `at` (a quote): the byte after its closing quote. */
function skipString(b: Buffer, at: number, end: number): number {
  let i = at + 1;
  for (;;) {
    const q = b.indexOf(QUOTE, i);
    if (q < 0 || q >= end) bad('an unterminated string', at);
    // a quote preceded by an odd number of backslashes is escaped
    let k = q - 1;
    while (k > at && b[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    i = q + 1;
  }
}

/** The end of the JSON value starting at `at` (no leading space). */
function skipValue(b: Buffer, at: number, end: number): number {
  const c = b[at];
  if (c === QUOTE) return skipString(b, at, end);
  if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
    let depth = 0;
    let i = at;
    while (i < end) {
      const x = b[i];
      if (x === QUOTE) {
        i = skipString(b, i, end);
        continue;
      }
      if (x === OPEN_ARRAY || x === OPEN_OBJECT) depth++;
      else if (x === CLOSE_ARRAY || x === CLOSE_OBJECT) {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    bad('an unclosed bracket', at);
  }
  // a number, true, false, null (or NaN, Infinity, -Infinity)
  let i = at;
  while (i < end) {
    const x = b[i];
    if (x === COMMA || x === CLOSE_ARRAY || x === CLOSE_OBJECT || isSpace(x)) break;
    if (x === QUOTE || x === OPEN_ARRAY || x === OPEN_OBJECT || x === COLON) bad('an unexpected character', i);
    i++;
  }
  if (i === at) bad('a missing value', at);
  return i;
}

function parseValue(b: Buffer, at: number, end: number): unknown {
  const c = b[at];
  // the common cells without a second string: a string without escapes, a plain number
  if (c === QUOTE) {
    // (a bounded search: indexOf would look on to the end of the file for every cell)
    let plain = true;
    for (let i = at + 1; i < end - 1; i++) {
      if (b[i] === BACKSLASH) {
        plain = false;
        break;
      }
    }
    if (plain) return b.toString('utf8', at + 1, end - 1);
  } else if ((c >= 0x30 && c <= 0x39) || c === 0x2d) {
    const v = Number(b.toString('latin1', at, end));
    if (Number.isFinite(v)) return v;
  }
  const text = b.toString('utf8', at, end);
  try {
    return JSON.parse(text);
  } catch {
    if (text === 'NaN' || text === 'Infinity' || text === '-Infinity') return null;
    bad(`a malformed value ${JSON.stringify(text.slice(0, 40))}`, at);
  }
}

/** Byte ranges of the top-level object's values, by key. */
function topLevel(b: Buffer): Map<string, [number, number]> {
  const end = b.length;
  let i = skipSpace(b, 0, end);
  if (b[i] !== OPEN_OBJECT) bad('not an object', i);
  const out = new Map<string, [number, number]>();
  i = skipSpace(b, i + 1, end);
  if (b[i] === CLOSE_OBJECT) return out;
  for (;;) {
    if (b[i] !== QUOTE) bad('a key expected', i);
    const ke = skipString(b, i, end);
    const key = parseValue(b, i, ke) as string;
    i = skipSpace(b, ke, end);
    if (b[i] !== COLON) bad('":" expected', i);
    i = skipSpace(b, i + 1, end);
    const ve = skipValue(b, i, end);
    if (!out.has(key)) out.set(key, [i, ve]);
    i = skipSpace(b, ve, end);
    if (b[i] === COMMA) {
      i = skipSpace(b, i + 1, end);
      continue;
    }
    if (b[i] === CLOSE_OBJECT) break;
    bad('"," or "}" expected', i);
  }
  if (skipSpace(b, i + 1, end) !== end) bad('text after the object', i + 1);
  return out;
}

export interface TableShape {
  /** Every column's name, in the file's order. */
  names: string[];
  /** The byte range of the "data" value. */
  data: [number, number];
}

/** The column names of a W&B table file's bytes; throws when it is not `{"columns": [...], "data": [...]}`. */
export function tableShape(b: Buffer): TableShape {
  const top = topLevel(b);
  const cols = top.get('columns');
  const data = top.get('data');
  if (!cols || !data || b[cols[0]] !== OPEN_ARRAY || b[data[0]] !== OPEN_ARRAY) {
    const e = new Error('not a W&B table ({"columns", "data"})');
    e.name = 'NotALog';
    throw e;
  }
  const names = (parseValue(b, cols[0], cols[1]) as unknown[]).map(String);
  return { names, data };
}

/**
 * A table's columns read: cell (row `r`, column `c` of `names`) is `uniq[cells[r * names.length + c]]`
 * (one array of indices for the whole table, repeated values once: a wide table of one row costs
 * its cells, not an object per column).
 */
export interface TableCells {
  names: string[];
  rows: number;
  uniq: unknown[];
  cells: Int32Array;
}

/** The value of `t`'s column `c` (an index into `t.names`) in row `r`. */
export const cellAt = (t: TableCells, r: number, c: number): unknown => t.uniq[t.cells[r * t.names.length + c]];

/**
 * The columns `want` (names of `shape.names`, each at its first position; the result's `names`
 * in the file's order) of every row of the table's data (rows that are not arrays are left out,
 * as they always were), at most `maxCells` cells read.
 */
export function readTableColumns(b: Buffer, shape: TableShape, want: string[], maxCells: number): TableCells {
  // each name's first position, looked up once (an indexOf per name is quadratic in a wide table)
  const first = new Map<string, number>();
  shape.names.forEach((n, i) => first.has(n) || first.set(n, i));
  const picked = new Set<number>();
  for (const name of want) {
    const i = first.get(name);
    if (i !== undefined) picked.add(i);
  }
  const positions = [...picked].sort((x, y) => x - y);
  const names = positions.map((i) => shape.names[i]);
  const width = positions.length;
  // file position → column of the result (−1: not read)
  const slot = new Int32Array(shape.names.length).fill(-1);
  positions.forEach((p, k) => (slot[p] = k));
  const uniq: unknown[] = [undefined];
  const seen = new Map<unknown, number>([[undefined, 0]]);
  let cells = new Int32Array(Math.max(16, width * 16));
  const [start, end] = shape.data;
  let rows = 0;
  let i = skipSpace(b, start + 1, end);
  while (i < end - 1) {
    if (b[i] === OPEN_ARRAY) {
      if ((rows + 1) * width > maxCells) throw new Error(`more than ${maxCells.toLocaleString('en-US')} cells of the columns read (${rows.toLocaleString('en-US')} rows of ${width} columns so far); not read`);
      const base = rows * width;
      if (base + width > cells.length) {
        const g = new Int32Array(Math.max(cells.length * 2, base + width));
        g.set(cells);
        cells = g;
      }
      // cells missing at the end of a short row are undefined (index 0)
      cells.fill(0, base, base + width);
      let j = skipSpace(b, i + 1, end);
      let col = 0;
      if (b[j] !== CLOSE_ARRAY) {
        for (;;) {
          const ve = skipValue(b, j, end);
          const k = col < slot.length ? slot[col] : -1;
          if (k >= 0) {
            const v = parseValue(b, j, ve);
            let u: number | undefined;
            if (typeof v === 'object' && v !== null) u = uniq.push(v) - 1;
            else {
              u = seen.get(v);
              if (u === undefined) {
                u = uniq.push(v) - 1;
                seen.set(v, u);
              }
            }
            cells[base + k] = u;
          }
          col++;
          j = skipSpace(b, ve, end);
          if (b[j] === COMMA) {
            j = skipSpace(b, j + 1, end);
            continue;
          }
          if (b[j] === CLOSE_ARRAY) break;
          bad('"," or "]" expected in a row', j);
        }
      }
      rows++;
      i = j + 1;
    } else i = skipValue(b, i, end); // a row that is not an array: left out
    i = skipSpace(b, i, end);
    if (b[i] === COMMA) i = skipSpace(b, i + 1, end);
    else if (b[i] !== CLOSE_ARRAY) bad('"," or "]" expected between rows', i);
  }
  return { names, rows, uniq, cells: cells.slice(0, rows * width) };
}
