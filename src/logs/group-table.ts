// The assembler's groups by key, in first-record order (Map-like: what `GroupAssembler.entries`
// is). Keys are held off the heap (key-index.ts): a group is its key's id, in an order of ids. A
// group in memory is its entry object. A cold head — restored from a persisted index or
// written by a save, complete, its roll-outs on disk (entries.ts `cold`) — is a row of typed
// columns instead (by id), ~60 bytes against ~180 for a head object and its first-source object,
// and no string: its question id is read back from its key (JSON of run, step and question:
// log-types.ts `groupKey`), its ground truth is a number in a table of the distinct ones. `get` builds
// a cold head as an object when one is asked for; nothing holds it after.
//
// A cold head is never changed in place: whoever changes a cold group reads it back first (the
// assembler's `warm`) and `set`s the full entry, which takes the row's place. An incomplete cold
// head (completed in place by idleness) stays an object, as does a head with a field the columns do
// not know.
import type { OutcomeCheck } from '../engine';
import { coldRef, type GroupEntry } from './entries.js';
import { groupKey, type GroupKey } from './log-types.js';
import { StringTable } from '../util/string-table';
import { KeyIndex } from './key-index.js';

/** The fields a columnar head has (a head with any other stays an object). */
const HEAD_KEYS: ReadonlySet<string> = new Set(['key', 'run', 'step', 'questionId', 'groundTruth', 'stream', 'framework', 'outcomeChecks', 'n', 'origin', 'format', 'complete', 'version', 'firstSource', 'cold']);
const SOURCE_KEYS: ReadonlySet<string> = new Set(['file', 'line', 'offset', 'length', 'item']);
const INT32 = (v: number) => v === (v | 0);
/** Numbers per row in `ints`. */
const W = 8;
/** What an id is in the table (`state`). */
const ABSENT = 0;
const ROW = 1;
const OBJECT = 2;

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

/** A group's id (`GroupTable.idOf`), key, step and size (`GroupTable.sizes`). */
export interface GroupSize {
  id: number;
  /** Made when read. */
  readonly key: GroupKey;
  step: number;
  n: number;
}

function columnar(k: GroupKey, e: GroupEntry): boolean {
  if (!e.cold || !e.complete) return false;
  for (const k in e) if (!HEAD_KEYS.has(k)) return false;
  const s = e.firstSource;
  for (const k in s) if (!SOURCE_KEYS.has(k)) return false;
  if (typeof e.step !== 'number' || typeof e.questionId !== 'string' || (e.groundTruth !== null && typeof e.groundTruth !== 'string') || typeof s.file !== 'string' || typeof s.offset !== 'number') return false;
  if (!(INT32(e.n) && INT32(s.line) && INT32(s.length) && (s.item === undefined || (INT32(s.item) && s.item >= 0)) && INT32(e.cold.chunk) && INT32(e.cold.confident))) return false;
  // the question id is read back from the key (`build`): only a head under its own key
  return k === groupKey(e.run, e.step, e.questionId);
}

/** The question id in a key (log-types.ts `groupKey`: JSON of run, step and question id). */
const questionOf = (k: GroupKey): string => (JSON.parse(k) as [string, number, string])[2];

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
  /** Every key ever held, by id (an id is never reused: a key deleted and set again gets a new one). */
  private readonly ids = new KeyIndex();
  /** Per id: ABSENT, ROW (a cold head in the columns) or OBJECT (in `objects`). */
  private state = new Uint8Array(1024);
  private readonly objects = new Map<number, GroupEntry>();
  /** The groups' order: ids, with the ids of groups deleted since left in as holes (dropped when it grows). */
  private order = new Int32Array(1024);
  private orderLength = 0;
  private holes = 0;
  /** Column rows allocated (indexed by id; allocated when the first cold head is kept). */
  private cap = 0;
  private step = new Float64Array(0);
  private version = new Float64Array(0);
  private offset = new Float64Array(0);
  /** Per row: n, kind, line, length, item (-1: none), chunk, confident, ground truth (its number in `truths`; -1: null). */
  private ints = new Int32Array(0);
  private readonly truths = new StringTable();
  private checks = new Map<number, OutcomeCheck[]>();
  private kinds: Kind[] = [];
  private kindIds = new Map<string, number>();

  /**
   * Counts `set`, `put`, `delete`, `clear` and `sort`: a group's version changes only through one of
   * them (a cold head is read back and `set` before it changes), so an unchanged count means
   * unchanged versions.
   */
  writes = 0;

  get size(): number {
    return this.ids.size; // a key is live in the index exactly while its group is held
  }

  has(k: GroupKey): boolean {
    return this.ids.liveId(k) >= 0;
  }

  /** The group's id (-1: not held): a number that stands for its key while it is held, and after (`keyOf`). */
  idOf(k: GroupKey): number {
    return this.ids.liveId(k);
  }

  /** The key index itself, for a holder of many of its ids (the store's summaries): read only. */
  get keyIds(): KeyIndex {
    return this.ids;
  }

  /** The key of an id given by `idOf` (a new string each time). */
  keyOf(id: number): GroupKey {
    return this.ids.key(id);
  }

  /** Groups held with their roll-outs (not cold heads): what a save would let go of. */
  get warm(): number {
    return this.warmCount;
  }

  private warmCount = 0;

  /** The group, a cold head built as a new object (change it only through `set`). */
  get(k: GroupKey): GroupEntry | undefined {
    const id = this.ids.liveId(k);
    return id < 0 ? undefined : this.entryOf(id, k);
  }

  /** The version of the group of id `id` (undefined: not held), without building its head. */
  versionOfId(id: number): number | undefined {
    if (!this.ids.isLive(id)) return undefined;
    return this.state[id] === ROW ? this.version[id] : this.objects.get(id)!.version;
  }

  /** The group's version without building its head. */
  versionOf(k: GroupKey): number | undefined {
    const id = this.ids.liveId(k);
    if (id < 0) return undefined;
    return this.state[id] === ROW ? this.version[id] : this.objects.get(id)!.version;
  }

  /**
   * `set`, where the caller reuses `e` after the call (a restore's heads, follow/heads.ts
   * `eachHead`): kept as a row, or as a copy with only its own fields.
   */
  put(k: GroupKey, e: GroupEntry): number {
    return columnar(k, e) ? this.setAs(k, e, true) : this.setAs(k, copyHead(e), false);
  }

  /** Kept in its place when the key is held (a Map's order), else appended. */
  set(k: GroupKey, e: GroupEntry): this {
    this.setAs(k, e, columnar(k, e));
    return this;
  }

  /** `set`, `row`: whether `e` goes to the columns (`columnar`); the group's id. */
  private setAs(k: GroupKey, e: GroupEntry, row: boolean): number {
    this.writes++;
    const had = this.ids.ids;
    const id = this.ids.add(k);
    if (id >= had) this.appendId(id);
    else {
      const o = this.objects.get(id);
      if (o && !o.cold) this.warmCount--;
    }
    if (row) {
      this.objects.delete(id);
      this.writeRow(id, e);
      this.state[id] = ROW;
    } else {
      if (this.state[id] === ROW) this.checks.delete(id);
      this.objects.set(id, e);
      this.state[id] = OBJECT;
      if (!e.cold) this.warmCount++;
    }
    return id;
  }

  delete(k: GroupKey): boolean {
    this.writes++;
    const id = this.ids.liveId(k);
    if (id < 0) return false;
    const o = this.objects.get(id);
    if (o && !o.cold) this.warmCount--;
    this.objects.delete(id);
    this.checks.delete(id);
    this.state[id] = ABSENT;
    this.ids.retire(id);
    this.holes++;
    return true;
  }

  clear(): void {
    this.writes++;
    this.warmCount = 0;
    this.holes = 0;
    this.order = new Int32Array(1024);
    this.orderLength = 0;
    this.places = null;
    this.ids.clear();
    this.objects.clear();
    this.checks.clear();
    this.state = new Uint8Array(1024);
    this.cap = 0;
    this.step = new Float64Array(0);
    this.version = new Float64Array(0);
    this.offset = new Float64Array(0);
    this.ints = new Int32Array(0);
  }

  /** The groups put in the order `compare` gives their heads (ids and versions kept); the last of them. */
  sort(compare: (a: GroupEntry, b: GroupEntry) => number): GroupEntry | undefined {
    this.writes++;
    const list: Array<{ id: number; e: GroupEntry }> = [];
    for (const id of this.liveIds()) list.push({ id, e: this.entryOf(id) });
    list.sort((a, b) => compare(a.e, b.e));
    const order = new Int32Array(Math.max(1024, 2 * list.length));
    const places = new Float64Array(Math.max(this.state.length, this.ids.ids));
    list.forEach(({ id }, i) => {
      order[i] = id;
      places[id] = i;
    });
    this.order = order;
    this.orderLength = list.length;
    this.holes = 0;
    this.places = places;
    this.lastPlace = list.length;
    return list.at(-1)?.e;
  }

  keys(): IterableIterator<GroupKey> {
    const self = this;
    return (function* () {
      for (const id of self.liveIds()) yield self.ids.key(id);
    })();
  }

  /** Every group in order, cold heads built one by one (count with `completeCount`, not this). */
  *values(): IterableIterator<GroupEntry> {
    for (const id of this.liveIds()) yield this.entryOf(id);
  }

  /** Each group's id, key, step and size in order, without building a head: one object, reused (read it at once). */
  *sizes(): IterableIterator<GroupSize> {
    const ids = this.ids;
    const out: GroupSize = {
      id: 0,
      get key(): GroupKey {
        return ids.key(this.id);
      },
      step: 0,
      n: 0,
    };
    for (const id of this.liveIds()) {
      out.id = id;
      if (this.state[id] === ROW) {
        out.step = this.step[id];
        out.n = this.ints[W * id];
      } else {
        const v = this.objects.get(id)!;
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
    for (const id of this.liveIds()) {
      out.key = this.ids.key(id);
      out.chunk = this.state[id] === ROW ? this.ints[W * id + 5] : -1;
      yield out;
    }
  }

  /** Complete groups (a cold row is complete), without building a head. */
  completeCount(): number {
    let n = this.ids.size - this.objects.size;
    for (const v of this.objects.values()) if (v.complete) n++;
    return n;
  }

  /** Each group's format, size and roll-outs with a confidence, without building a head. */
  forEachCount(f: (format: GroupEntry['format'], n: number, confident: number | null, e: GroupEntry | null) => void): void {
    for (const id of this.liveIds()) {
      if (this.state[id] !== ROW) {
        const v = this.objects.get(id)!;
        f(v.format, v.n, null, v);
      } else f(this.kinds[this.ints[W * id + 1]].format, this.ints[W * id], this.ints[W * id + 6], null);
    }
  }

  /** A cold head's record in the saved index, now `chunk` (a save wrote it there). */
  moveCold(k: GroupKey, chunk: number): void {
    const id = this.ids.liveId(k);
    if (id < 0) return;
    if (this.state[id] === ROW) this.ints[W * id + 5] = chunk;
    else {
      const v = this.objects.get(id)!;
      if (v.cold) v.cold = coldRef(chunk, v.cold.confident);
    }
  }

  /** Room for `rows` groups in all, as cold heads (a restore knows how many it brings: no doubling's slack, no rehash). */
  reserve(rows: number): void {
    const ids = this.ids.ids - this.ids.size + rows;
    this.ids.reserve(ids, 0);
    if (ids > this.cap) this.grow(ids);
    if (ids > this.state.length) {
      const s = new Uint8Array(ids);
      s.set(this.state);
      this.state = s;
    }
    if (rows + this.holes > this.order.length) {
      const o = new Int32Array(rows + this.holes);
      o.set(this.order.subarray(0, this.orderLength));
      this.order = o;
    }
  }

  /**
   * The live ids in order (holes skipped). As a Map's iteration: a group deleted meanwhile is not
   * visited, one appended is. The order may be compacted or sorted into a new array meanwhile: the
   * walk then goes on in the new one after the last id it gave (by its place, `placeOf`).
   */
  private *liveIds(): IterableIterator<number> {
    let order = this.order;
    let last = -1;
    for (let i = 0; ; i++) {
      if (order !== this.order) {
        order = this.order;
        i = last < 0 ? 0 : this.after(this.placeOf(last));
      }
      if (i >= this.orderLength) return;
      const id = order[i];
      if (this.state[id] === ABSENT) continue;
      last = id;
      yield id;
    }
  }

  /** Each id's place in the order, when it is not its id (after a `sort`). */
  private places: Float64Array | null = null;
  private lastPlace = 0;

  private placeOf(id: number): number {
    return this.places ? this.places[id] : id;
  }

  /** The index in `order` of the first id placed after `place` (the order is by place). */
  private after(place: number): number {
    let lo = 0;
    let hi = this.orderLength;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.placeOf(this.order[mid]) <= place) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private entryOf(id: number, key?: GroupKey): GroupEntry {
    return this.state[id] === ROW ? this.build(key ?? this.ids.key(id), id) : this.objects.get(id)!;
  }

  private appendId(id: number): void {
    if (this.orderLength === this.order.length) {
      // into a new array, without the holes (never in place: a walk under way finds its place in it, `liveIds`)
      const o = new Int32Array(2 * (this.orderLength - this.holes) + 1024);
      let n = 0;
      for (let i = 0; i < this.orderLength; i++) if (this.state[this.order[i]] !== ABSENT) o[n++] = this.order[i];
      this.order = o;
      this.orderLength = n;
      this.holes = 0;
    }
    this.order[this.orderLength++] = id;
    if (id >= this.state.length) {
      const s = new Uint8Array(Math.max(2 * this.state.length, id + 1));
      s.set(this.state);
      this.state = s;
    }
    if (this.places) {
      if (id >= this.places.length) {
        const p = new Float64Array(Math.max(2 * this.places.length, id + 1));
        p.set(this.places);
        this.places = p;
      }
      this.places[id] = ++this.lastPlace;
    }
  }

  private grow(cap: number): void {
    const typed = <T extends Float64Array | Int32Array>(a: T, width: number, make: (n: number) => T): T => {
      const b = make(cap * width);
      b.set(a);
      return b;
    };
    this.step = typed(this.step, 1, (n) => new Float64Array(n));
    this.version = typed(this.version, 1, (n) => new Float64Array(n));
    this.offset = typed(this.offset, 1, (n) => new Float64Array(n));
    this.ints = typed(this.ints, W, (n) => new Int32Array(n));
    this.cap = cap;
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

  private writeRow(row: number, e: GroupEntry): void {
    if (row >= this.cap) this.grow(Math.max(1024, row + 1, Math.ceil(this.cap * 1.5)));
    const s = e.firstSource;
    this.step[row] = e.step;
    this.version[row] = e.version;
    this.offset[row] = s.offset;
    const at = W * row;
    this.ints[at] = e.n;
    this.ints[at + 1] = this.kindOf(e);
    this.ints[at + 2] = s.line;
    this.ints[at + 3] = s.length;
    this.ints[at + 4] = s.item ?? -1;
    this.ints[at + 5] = e.cold!.chunk;
    this.ints[at + 6] = e.cold!.confident;
    this.ints[at + 7] = this.truths.id(e.groundTruth);
    if (e.outcomeChecks) this.checks.set(row, e.outcomeChecks);
    else this.checks.delete(row);
  }

  /** A cold row as the head it was `set` with (one literal: its fields in the object). */
  private build(key: GroupKey, row: number): GroupEntry {
    const at = W * row;
    const kind = this.kinds[this.ints[at + 1]];
    const firstSource: GroupEntry['firstSource'] = { file: kind.file, line: this.ints[at + 2], offset: this.offset[row], length: this.ints[at + 3] };
    if (this.ints[at + 4] >= 0) firstSource.item = this.ints[at + 4];
    const h: GroupEntry = {
      key,
      step: this.step[row],
      questionId: questionOf(key),
      groundTruth: this.ints[at + 7] < 0 ? null : this.truths.strings[this.ints[at + 7]],
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
