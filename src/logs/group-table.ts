// The assembler's groups by key, in first-record order (Map-like: what `GroupAssembler.entries`
// is). A group in memory is its entry object. A cold head — restored from a persisted index or
// written by a save, complete, its roll-outs on disk (entries.ts `cold`) — is a row of typed
// columns instead, ~70 bytes against ~180 for a head object and its first-source object (a huge
// run's heads are most of what the extension host keeps for it). `get` builds a cold head as an
// object when one is asked for; nothing holds it after.
//
// A cold head is never changed in place: whoever changes a cold group reads it back first (the
// assembler's `warm`) and `set`s the full entry, which takes the row's place. An incomplete cold
// head (completed in place by idleness) stays an object, as does a head with a field the columns do
// not know.
import type { OutcomeCheck } from '../engine';
import { coldRef, type GroupEntry } from './entries.js';
import type { GroupKey } from './types.js';

/** The fields a columnar head has (a head with any other stays an object). */
const HEAD_KEYS: ReadonlySet<string> = new Set(['key', 'run', 'step', 'questionId', 'groundTruth', 'stream', 'framework', 'outcomeChecks', 'n', 'origin', 'format', 'complete', 'version', 'firstSource', 'cold']);
const SOURCE_KEYS: ReadonlySet<string> = new Set(['file', 'line', 'offset', 'length', 'item']);
const INT32 = (v: number) => v === (v | 0);

/** What a run's heads share: run, stream, framework, origin, format and the first record's file. */
interface Kind {
  run?: string;
  stream?: GroupEntry['stream'];
  framework?: GroupEntry['framework'];
  origin: GroupEntry['origin'];
  format: GroupEntry['format'];
  file: string;
}

/** A group's key and, for a cold row (complete, as saved), its saved record; -1 otherwise (`GroupTable.slots`). */
export interface GroupSlot {
  key: GroupKey;
  chunk: number;
}

/** A group's key, step and size (`GroupTable.sizes`). */
export interface GroupSize {
  key: GroupKey;
  step: number;
  n: number;
}

function columnar(e: GroupEntry): boolean {
  if (!e.cold || !e.complete) return false;
  for (const k in e) if (!HEAD_KEYS.has(k)) return false;
  const s = e.firstSource;
  for (const k in s) if (!SOURCE_KEYS.has(k)) return false;
  if (typeof e.step !== 'number' || typeof e.questionId !== 'string' || (e.groundTruth !== null && typeof e.groundTruth !== 'string') || typeof s.file !== 'string' || typeof s.offset !== 'number') return false;
  return INT32(e.n) && INT32(s.line) && INT32(s.length) && (s.item === undefined || (INT32(s.item) && s.item >= 0)) && INT32(e.cold.chunk) && INT32(e.cold.confident);
}

/**
 * A head as an object of its own, field by field (not spread and then deleted from: a delete
 * makes a dictionary), a field absent where it is undefined; its first record and ColdRef copied.
 */
function copyHead(e: GroupEntry): GroupEntry {
  const h: Record<string, unknown> = {};
  for (const k in e) if (e[k as keyof GroupEntry] !== undefined) h[k] = e[k as keyof GroupEntry];
  const s = e.firstSource;
  const firstSource: GroupEntry['firstSource'] = { file: s.file, line: s.line, offset: s.offset, length: s.length };
  if (s.item !== undefined) firstSource.item = s.item;
  h.firstSource = firstSource;
  if (e.cold) h.cold = { chunk: e.cold.chunk, confident: e.cold.confident };
  return h as unknown as GroupEntry;
}

export class GroupTable {
  /** A group in memory, or a cold head's row in the columns. */
  private readonly map = new Map<GroupKey, GroupEntry | number>();
  private free: number[] = [];
  private used = 0;
  private cap = 0;
  private step = new Float64Array(0);
  private version = new Float64Array(0);
  private offset = new Float64Array(0);
  /** Per row: n, kind, line, length, item (-1: none), chunk, confident. */
  private ints = new Int32Array(0);
  private questionId: string[] = [];
  private groundTruth: (string | null)[] = [];
  private checks = new Map<number, OutcomeCheck[]>();
  private kinds: Kind[] = [];
  private kindIds = new Map<string, number>();

  /**
   * Counts `set`, `put`, `delete` and `clear`: a group's version changes only through one of them
   * (a cold head is read back and `set` before it changes), so an unchanged count means unchanged
   * versions.
   */
  writes = 0;

  get size(): number {
    return this.map.size;
  }

  has(k: GroupKey): boolean {
    return this.map.has(k);
  }

  /** Groups held with their roll-outs (not cold heads): what a save would let go of. */
  get warm(): number {
    return this.warmCount;
  }

  private warmCount = 0;

  /** The group, a cold head built as a new object (change it only through `set`). */
  get(k: GroupKey): GroupEntry | undefined {
    const v = this.map.get(k);
    return typeof v === 'number' ? this.build(k, v) : v;
  }

  /** The group's version without building its head. */
  versionOf(k: GroupKey): number | undefined {
    const v = this.map.get(k);
    return typeof v === 'number' ? this.version[v] : v?.version;
  }

  /**
   * `set`, where the caller reuses `e` after the call (a restore's heads, follow/heads.ts
   * `eachHead`): kept as a row, or as a copy with only its own fields.
   */
  put(k: GroupKey, e: GroupEntry): this {
    return this.set(k, columnar(e) ? e : copyHead(e));
  }

  /** Kept in its place when the key is held (a Map's order), else appended. */
  set(k: GroupKey, e: GroupEntry): this {
    this.writes++;
    const v = this.map.get(k);
    if (v !== undefined && typeof v !== 'number' && !v.cold) this.warmCount--;
    if (columnar(e)) {
      const row = typeof v === 'number' ? v : this.row();
      this.write(row, e);
      this.map.set(k, row);
    } else {
      if (typeof v === 'number') this.release(v);
      this.map.set(k, e);
      if (!e.cold) this.warmCount++;
    }
    return this;
  }

  delete(k: GroupKey): boolean {
    this.writes++;
    const v = this.map.get(k);
    if (typeof v === 'number') this.release(v);
    else if (v && !v.cold) this.warmCount--;
    return this.map.delete(k);
  }

  clear(): void {
    this.writes++;
    this.warmCount = 0;
    this.map.clear();
    this.free = [];
    this.used = 0;
    this.questionId.fill('');
    this.groundTruth.fill(null);
    this.checks.clear();
  }

  keys(): IterableIterator<GroupKey> {
    return this.map.keys();
  }

  /** Every group in order, cold heads built one by one (count with `completeCount`, not this). */
  *values(): IterableIterator<GroupEntry> {
    for (const [k, v] of this.map) yield typeof v === 'number' ? this.build(k, v) : v;
  }

  /** Each group's key, step and size in order, without building a head: one object, reused (read it at once). */
  *sizes(): IterableIterator<GroupSize> {
    const out: GroupSize = { key: '', step: 0, n: 0 };
    for (const [k, v] of this.map) {
      out.key = k;
      if (typeof v === 'number') {
        out.step = this.step[v];
        out.n = this.ints[7 * v];
      } else {
        out.step = v.step;
        out.n = v.n;
      }
      yield out;
    }
  }

  /**
   * Each group's key in order and, for a cold row, its saved record (-1 for a group held as an
   * object: in memory, or a cold head the columns do not take, which may have changed since it was
   * saved), without building a head: one object, reused (read it at once).
   */
  *slots(): IterableIterator<GroupSlot> {
    const out: GroupSlot = { key: '', chunk: -1 };
    for (const [k, v] of this.map) {
      out.key = k;
      out.chunk = typeof v === 'number' ? this.ints[7 * v + 5] : -1;
      yield out;
    }
  }

  /** Complete groups (a cold row is complete), without building a head. */
  completeCount(): number {
    let n = 0;
    for (const v of this.map.values()) if (typeof v === 'number' || v.complete) n++;
    return n;
  }

  /** Each group's format, size and roll-outs with a confidence, without building a head. */
  forEachCount(f: (format: GroupEntry['format'], n: number, confident: number | null, e: GroupEntry | null) => void): void {
    for (const v of this.map.values()) {
      if (typeof v !== 'number') f(v.format, v.n, null, v);
      else f(this.kinds[this.ints[7 * v + 1]].format, this.ints[7 * v], this.ints[7 * v + 6], null);
    }
  }

  /** A cold head's record in the saved index, now `chunk` (a save wrote it there). */
  moveCold(k: GroupKey, chunk: number): void {
    const v = this.map.get(k);
    if (typeof v === 'number') this.ints[7 * v + 5] = chunk;
    else if (v?.cold) v.cold = coldRef(chunk, v.cold.confident);
  }

  /** Room for `rows` cold heads in all (a restore knows how many it brings: no doubling's slack). */
  reserve(rows: number): void {
    if (rows > this.cap) this.grow(rows);
  }

  private row(): number {
    const r = this.free.pop();
    if (r !== undefined) return r;
    if (this.used === this.cap) this.grow(Math.max(1024, Math.ceil(this.cap * 1.5)));
    return this.used++;
  }

  private grow(cap: number): void {
    const typed = <T extends Float64Array | Int32Array>(a: T, width: number, make: (n: number) => T): T => {
      const b = make(cap * width);
      b.set(a);
      return b;
    };
    // the string columns too, at their final length (an array grown by pushes keeps ~1.5× slack)
    const strings = <T>(a: T[]): T[] => {
      const b = new Array<T>(cap);
      for (let i = 0; i < this.used; i++) b[i] = a[i];
      return b;
    };
    this.step = typed(this.step, 1, (n) => new Float64Array(n));
    this.version = typed(this.version, 1, (n) => new Float64Array(n));
    this.offset = typed(this.offset, 1, (n) => new Float64Array(n));
    this.ints = typed(this.ints, 7, (n) => new Int32Array(n));
    this.questionId = strings(this.questionId);
    this.groundTruth = strings(this.groundTruth);
    this.cap = cap;
  }

  private release(row: number): void {
    this.questionId[row] = '';
    this.groundTruth[row] = null;
    this.checks.delete(row);
    this.free.push(row);
  }

  private lastKind = -1;

  private kindOf(e: GroupEntry): number {
    // a run's heads come in long runs of one kind (one file): compared before a string is made
    const last = this.kinds[this.lastKind];
    if (last && last.file === e.firstSource.file && last.format === e.format && last.origin === e.origin && last.run === e.run && last.stream === e.stream && last.framework === e.framework) return this.lastKind;
    const id = `${e.run ?? '\u0001'}\0${e.stream ?? ''}\0${e.framework ?? ''}\0${e.origin}\0${e.format}\0${e.firstSource.file}`;
    let i = this.kindIds.get(id);
    if (i === undefined) {
      const kind: Kind = { origin: e.origin, format: e.format, file: e.firstSource.file };
      if (e.run !== undefined) kind.run = e.run;
      if (e.stream !== undefined) kind.stream = e.stream;
      if (e.framework !== undefined) kind.framework = e.framework;
      i = this.kinds.push(kind) - 1;
      this.kindIds.set(id, i);
    }
    this.lastKind = i;
    return i;
  }

  private write(row: number, e: GroupEntry): void {
    const s = e.firstSource;
    this.step[row] = e.step;
    this.version[row] = e.version;
    this.offset[row] = s.offset;
    const at = 7 * row;
    this.ints[at] = e.n;
    this.ints[at + 1] = this.kindOf(e);
    this.ints[at + 2] = s.line;
    this.ints[at + 3] = s.length;
    this.ints[at + 4] = s.item ?? -1;
    this.ints[at + 5] = e.cold!.chunk;
    this.ints[at + 6] = e.cold!.confident;
    this.questionId[row] = e.questionId;
    this.groundTruth[row] = e.groundTruth;
    if (e.outcomeChecks) this.checks.set(row, e.outcomeChecks);
    else this.checks.delete(row);
  }

  /** A cold row as the head it was `set` with (one literal: its fields in the object). */
  private build(key: GroupKey, row: number): GroupEntry {
    const at = 7 * row;
    const kind = this.kinds[this.ints[at + 1]];
    const firstSource: GroupEntry['firstSource'] = { file: kind.file, line: this.ints[at + 2], offset: this.offset[row], length: this.ints[at + 3] };
    if (this.ints[at + 4] >= 0) firstSource.item = this.ints[at + 4];
    const h: GroupEntry = {
      key,
      step: this.step[row],
      questionId: this.questionId[row],
      groundTruth: this.groundTruth[row],
      n: this.ints[at],
      origin: kind.origin,
      format: kind.format,
      complete: true,
      version: this.version[row],
      firstSource,
      cold: { chunk: this.ints[at + 5], confident: this.ints[at + 6] }, // not shared (coldRef): nothing keeps it
    };
    if (kind.run !== undefined) h.run = kind.run;
    if (kind.stream !== undefined) h.stream = kind.stream;
    if (kind.framework !== undefined) h.framework = kind.framework;
    const c = this.checks.get(row);
    if (c) h.outcomeChecks = c;
    return h;
  }
}
