// A saved record's group heads as columns (follow/persist.ts writes one per light record): an open
// decodes one typed array and two arrays of strings per record instead of an object per group, and
// builds each head as one literal, so its fields are in the object and its integers small integers.
import type { OutcomeCheck } from '../../engine';
import { coldRef, type GroupEntry } from '../entries.js';
import { StringTable } from '../../util/string-table';

/**
 * A record's heads as columns: an open decodes one typed array and two arrays of strings per record
 * (V8 decodes an object property by property, ~2 µs a head), and builds each head as one literal.
 */
export interface PackedHeads {
  keys: string[];
  /** The distinct strings of the record's heads (questions, truths, runs, files, formats...). */
  strs: string[];
  /** HEAD_WIDTH numbers per head, in HEAD_FIELDS order; a string field is its index in `strs` (-1: none). */
  nums: Float64Array;
  /** The heads with outcome checks: [place in the record, checks]. */
  checks: Array<[number, OutcomeCheck[]]>;
}
const HEAD_FIELDS = ['step', 'n', 'complete', 'questionId', 'groundTruth', 'run', 'stream', 'framework', 'origin', 'format', 'file', 'line', 'offset', 'length', 'item', 'confident'] as const;
const HEAD_WIDTH = HEAD_FIELDS.length;
const HEAD_KEYS: ReadonlySet<string> = new Set(['key', 'run', 'step', 'questionId', 'groundTruth', 'stream', 'framework', 'outcomeChecks', 'n', 'origin', 'format', 'complete', 'firstSource', 'cold']);
const SOURCE_KEYS: ReadonlySet<string> = new Set(['file', 'line', 'offset', 'length', 'item']);

/** A record's heads as columns, or null when one has a field this does not know (then saved as objects). */
export function packHeads(heads: Array<Omit<GroupEntry, 'version'>>): PackedHeads | null {
  const table = new StringTable();
  const id = (v: string | null | undefined) => table.id(v);
  const nums = new Float64Array(HEAD_WIDTH * heads.length);
  const checks: PackedHeads['checks'] = [];
  for (let j = 0; j < heads.length; j++) {
    const h = heads[j];
    for (const k in h) if (!HEAD_KEYS.has(k)) return null;
    for (const k in h.firstSource) if (!SOURCE_KEYS.has(k)) return null;
    const src = h.firstSource;
    const row = [h.step, h.n, h.complete ? 1 : 0, id(h.questionId), id(h.groundTruth), id(h.run), id(h.stream), id(h.framework), id(h.origin), id(h.format), id(src.file), src.line, src.offset, src.length, src.item ?? Number.NaN, h.cold?.confident ?? 0];
    nums.set(row, HEAD_WIDTH * j);
    if (h.outcomeChecks) checks.push([j, h.outcomeChecks]);
  }
  return { keys: heads.map((h) => h.key), strs: table.strings, nums, checks };
}

/**
 * A number read from a Float64Array as V8 keeps an integer read from the logs: a small integer
 * (Smi), not a boxed double; a head's field holding a double is a 16-byte box per head.
 */
const num = (v: number): number => (v === (v | 0) ? v | 0 : v);

/**
 * The heads of record `chunk` from their columns, one by one to `f` (`intern`: one string per
 * distinct value across records). One head object is reused for a record's complete heads (a
 * restore keeps them as columns, group-table.ts, and a huge run's heads as objects are garbage by
 * the megabyte): `f` reads it during the call and keeps nothing of it; an incomplete head is an
 * object of its own. Throws on columns that are not a record's (the caller then distrusts
 * whatever `f` was given).
 */
export function eachHead(p: PackedHeads, chunk: number, intern: (s: string) => string, f: (h: GroupEntry, j: number) => void): void {
  const { keys, strs, nums, checks } = p ?? ({} as PackedHeads);
  if (!Array.isArray(keys) || !Array.isArray(strs) || !(nums instanceof Float64Array) || nums.length !== HEAD_WIDTH * keys.length || !Array.isArray(checks)) throw new Error('heads that are not packed heads');
  const s = strs.map((x) => {
    if (typeof x !== 'string') throw new Error('a string of the heads is not one');
    return intern(x);
  });
  const str = (i: number): string | undefined => {
    if (i === -1) return undefined;
    const v = s[i];
    if (v === undefined) throw new Error('a string outside the heads');
    return v;
  };
  const checked = new Map<number, OutcomeCheck[]>();
  for (const [j, c] of checks) {
    if (!Number.isInteger(j) || j < 0 || j >= keys.length || !Array.isArray(c)) throw new Error('outcome checks outside the heads');
    checked.set(j, c);
  }
  // the reused head has every field, undefined where a head has none (no delete: that would make
  // it a dictionary); a head kept as an object is built as one literal with only its own fields
  const cold: { chunk: number; confident: number } = { chunk, confident: 0 };
  const src: GroupEntry['firstSource'] = { file: '', line: 0, offset: 0, length: 0, item: undefined };
  const scratch: GroupEntry = { key: '', step: 0, questionId: '', groundTruth: null, n: 0, origin: 'group', format: 'native', complete: true, version: 0, firstSource: src, cold, run: undefined, stream: undefined, framework: undefined, outcomeChecks: undefined };
  for (let j = 0, at = 0; j < keys.length; j++, at += HEAD_WIDTH) {
    const key = keys[j];
    const questionId = str(nums[at + 3]);
    const origin = str(nums[at + 8]) as GroupEntry['origin'] | undefined;
    const format = str(nums[at + 9]) as GroupEntry['format'] | undefined;
    const file = str(nums[at + 10]);
    if (typeof key !== 'string' || questionId === undefined || origin === undefined || format === undefined || file === undefined) throw new Error('a head without its key, question, origin, format or file');
    const item = nums[at + 14];
    const run = str(nums[at + 5]);
    const stream = str(nums[at + 6]) as GroupEntry['stream'];
    const framework = str(nums[at + 7]) as GroupEntry['framework'];
    const c = checked.get(j);
    if (nums[at + 2] === 1) {
      src.file = file;
      src.line = num(nums[at + 11]);
      src.offset = num(nums[at + 12]);
      src.length = num(nums[at + 13]);
      src.item = Number.isNaN(item) ? undefined : num(item);
      scratch.key = key;
      scratch.step = num(nums[at]);
      scratch.questionId = questionId;
      scratch.groundTruth = str(nums[at + 4]) ?? null;
      scratch.n = num(nums[at + 1]);
      scratch.origin = origin;
      scratch.format = format;
      scratch.version = 0;
      cold.confident = num(nums[at + 15]);
      scratch.run = run;
      scratch.stream = stream;
      scratch.framework = framework;
      scratch.outcomeChecks = c;
      f(scratch, j);
      continue;
    }
    const firstSource: GroupEntry['firstSource'] = { file, line: num(nums[at + 11]), offset: num(nums[at + 12]), length: num(nums[at + 13]) };
    if (!Number.isNaN(item)) firstSource.item = num(item);
    const h: GroupEntry = {
      key,
      step: num(nums[at]),
      questionId,
      groundTruth: str(nums[at + 4]) ?? null,
      n: num(nums[at + 1]),
      origin,
      format,
      complete: false,
      version: 0,
      firstSource,
      cold: coldRef(chunk, num(nums[at + 15])),
    };
    if (run !== undefined) h.run = run;
    if (stream !== undefined) h.stream = stream;
    if (framework !== undefined) h.framework = framework;
    if (c) h.outcomeChecks = c;
    f(h, j);
  }
}
