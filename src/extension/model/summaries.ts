// The explorer's question summaries of one run, held so that a huge run's summaries cost the host
// little: a summary scored in this process (with its health record) is kept as it is; a light one
// (restored from a saved index, or saved since: its health record is on disk with its group) is
// kept as one row of typed columns (~50 bytes, and its key's ~40 in an off-heap key index, instead
// of ~300 as an object) and built again as an object when it is asked for — the explorer asks for the questions in view. Map-like: the store,
// the explorer and the status bar use it as they would a Map<GroupKey, QuestionSummary>.
import { OPERATOR_IDS, type OperatorId } from '../../engine';
import { KeyIndex, type GroupKey } from '../../logs/log-layer';
import type { Regime } from '../../protocol/messages';
import type { QuestionSummary } from './scoring';
import { StringTable } from '../../util/string-table';

const REGIMES: Regime[] = ['saturated', 'contested', 'competence-floor', 'empty'];
const F_OVERTURN = 1;
const F_DEGENERATE = 2;
const F_PLURALITY = 4;
const F_AUROC = 8;
const F_CHECKED = 16;

/** Kept as a row of the columns: its health record is on disk, and its regime one of the columns'. */
const light = (s: QuestionSummary): boolean => !s.health && !!s.healthSaved && REGIMES.indexOf(s.regime) >= 0;

/**
 * One saved record's summaries (their light forms), packed: a light one as a row of numbers (what
 * the columns hold), any other as an object. A restore then decodes one typed array and two short
 * arrays per record instead of an object tree per question.
 */
export interface PackedSummaries {
  /** PACKED_WIDTH numbers per question: its kind (none, a row, an object), then its row (`encodeRow`: labels are numbers in `strings`). */
  nums: Float64Array;
  strings: string[];
  /** The summaries that are not light, in order. */
  objects: QuestionSummary[];
}
const PACKED_WIDTH = 10; // the kind, then a row (`encodeRow`)
const PACK_NONE = 0;
const PACK_ROW = 1;
const PACK_OBJECT = 2;

/**
 * A light summary's row as numbers, at `nums[at..at + ROW_WIDTH)`: gate, AUROC U, AUROC pairs, n,
 * mismatches, label, majority label (their numbers in `strings`), flags | regime << 8 | checked
 * << 16, rescued-by bits. The one encoding of a row: the columns and a packed record both use it.
 */
function encodeRow(s: QuestionSummary, strings: StringTable, nums: Float64Array, at: number): void {
  const d = s.digest;
  const f = (s.overturn ? F_OVERTURN : 0) | (d.degenerate ? F_DEGENERATE : 0) | (d.plurality ? F_PLURALITY : 0) | (d.auroc ? F_AUROC : 0) | (s.checkedAgainst ? F_CHECKED : 0);
  let rescued = 0;
  for (const o of d.rescuedBy) rescued |= 1 << OPERATOR_IDS.indexOf(o);
  nums[at] = s.gate;
  nums[at + 1] = d.auroc ? d.auroc.u : 0;
  nums[at + 2] = d.auroc ? d.auroc.pairs : 0;
  nums[at + 3] = s.n;
  nums[at + 4] = s.mismatches;
  nums[at + 5] = strings.id(s.label);
  nums[at + 6] = strings.id(s.majorityLabel);
  nums[at + 7] = f | (REGIMES.indexOf(s.regime) << 8) | ((s.checkedAgainst ? OPERATOR_IDS.indexOf(s.checkedAgainst) : 0) << 16);
  nums[at + 8] = rescued >>> 0;
}
const ROW_WIDTH = 9;
/** One row's numbers on their way to the columns (`write`). */
const SCRATCH = new Float64Array(ROW_WIDTH);

/** Packs a record's summaries (undefined where a question has none): see `PackedSummaries`. */
export function packSummaries(xs: (QuestionSummary | undefined)[]): PackedSummaries {
  const nums = new Float64Array(PACKED_WIDTH * xs.length);
  const strings = new StringTable();
  const objects: QuestionSummary[] = [];
  xs.forEach((s, i) => {
    const at = PACKED_WIDTH * i;
    if (s === undefined) nums[at] = PACK_NONE;
    else if (!light(s)) {
      nums[at] = PACK_OBJECT;
      objects.push(s);
    } else {
      nums[at] = PACK_ROW;
      encodeRow(s, strings, nums, at + 1);
    }
  });
  return { nums, strings: strings.strings, objects };
}

export class QuestionSummaries implements Iterable<[GroupKey, QuestionSummary]> {
  /**
   * `keyIds`: the run index's key ids (RunIndex.keyIds), under which light summaries are kept by
   * their group's id (no key of their own: a huge run's summaries are mostly light); without it, or
   * while it gives none, a key index of their own. Rows kept under one index are dropped when it
   * changes (another index, or the same one cleared).
   */
  constructor(private readonly keyIds?: () => KeyIndex | undefined) {}

  /** Summaries kept as objects (scored in this process, with their health record). */
  private readonly full = new Map<GroupKey, QuestionSummary>();
  private readonly own = new KeyIndex();
  private bound: KeyIndex = this.own;
  private boundAt = this.own.generation;
  /** Light summaries: row + 1 by key id (0: none). */
  private rowOf = new Int32Array(0);
  private rowCount = 0;
  private free: number[] = [];
  /** Rows used so far (a deleted row is reused). */
  private used = 0;
  private cap = 0;
  private gate = new Float64Array(0);
  private aurocU = new Float64Array(0);
  private aurocPairs = new Float64Array(0);
  private counts = new Uint32Array(0); // n, mismatches: two per row
  private labels = new Int32Array(0); // label, majority label: two per row (string ids; -1: null)
  private flags = new Uint8Array(0);
  private regime = new Uint8Array(0);
  private checked = new Uint8Array(0);
  private rescued = new Uint32Array(0); // bit i: OPERATOR_IDS[i]
  private readonly strings = new StringTable();

  /** The key ids the rows are under now (rows under another index, or a cleared one, dropped). */
  private ids(): KeyIndex {
    const k = this.keyIds?.() ?? this.own;
    if (k !== this.bound || k.generation !== this.boundAt) {
      this.dropRows();
      this.bound = k;
      this.boundAt = k.generation;
    }
    return k;
  }

  /** The row of k's light summary, -1 for none. */
  private rowFor(k: GroupKey): number {
    const id = this.ids().liveId(k);
    return id >= 0 && id < this.rowOf.length ? this.rowOf[id] - 1 : -1;
  }

  /** k's id to keep a row under (-1: a key the index does not hold: its summary is not kept). */
  private idToKeep(k: GroupKey): number {
    const ids = this.ids();
    const id = ids === this.own ? ids.add(k) : ids.liveId(k);
    if (id >= this.rowOf.length) this.roomFor(Math.max(id + 1, ids.ids, Math.ceil(1.5 * this.rowOf.length)));
    return id;
  }

  /** `rowOf` for ids below `n`. */
  private roomFor(n: number): void {
    if (n <= this.rowOf.length) return;
    const b = new Int32Array(n);
    b.set(this.rowOf);
    this.rowOf = b;
  }

  private dropRows(): void {
    this.rowOf = new Int32Array(0);
    this.rowCount = 0;
    this.free = [];
    this.used = 0;
  }

  get size(): number {
    this.ids(); // rows under an index gone are not counted
    return this.full.size + this.rowCount;
  }

  /** Summaries held as objects: scored and not saved since (with their health records). */
  unsavedCount(): number {
    return this.full.size;
  }

  /** Whether k's summary is held as an object (scored and not saved since, or one the columns do not take), without building it. */
  heldWhole(k: GroupKey): boolean {
    return this.full.has(k);
  }

  has(k: GroupKey): boolean {
    return this.rowFor(k) >= 0 || this.full.has(k); // light ones first: a restored run's are
  }

  /** Whether the group of id `id` in the run index has a light summary (false too when the summaries are not kept under the index's ids). */
  hasLight(id: number): boolean {
    return this.ids() === this.keyIds?.() && id < this.rowOf.length && this.rowOf[id] > 0;
  }

  get(k: GroupKey): QuestionSummary | undefined {
    const s = this.full.get(k);
    if (s) return s;
    const r = this.rowFor(k);
    return r < 0 ? undefined : this.build(r);
  }

  set(k: GroupKey, s: QuestionSummary): this {
    this.delete(k);
    if (!light(s)) {
      this.full.set(k, s);
      return this;
    }
    const id = this.idToKeep(k);
    if (id < 0) return this;
    this.rowOf[id] = this.write(s) + 1;
    this.rowCount++;
    return this;
  }

  /**
   * A light summary written to a row of no question (its number; a summary that is not light is
   * given back as it is): a restore stages each summary as it is decoded, so that no object per
   * question outlives the decoding, and `adopt`s into the run's summaries those still valid.
   */
  stage(s: QuestionSummary): number | QuestionSummary {
    return light(s) ? this.write(s) : s;
  }

  /**
   * A saved record's summaries packed by `packSummaries`, staged as `stage` would stage each: a
   * light one to a row (its number), any other as it is, none as undefined. Throws on a pack that
   * is not one (the saved index is then read as corrupt).
   */
  stagePacked(p: unknown): (number | QuestionSummary | undefined)[] {
    const { nums, strings, objects } = (p ?? {}) as Partial<PackedSummaries>;
    if (!(nums instanceof Float64Array) || nums.length % PACKED_WIDTH !== 0 || !Array.isArray(strings) || !Array.isArray(objects)) throw new Error('not packed summaries');
    const string = (i: number): string | null => {
      if (i === -1) return null;
      const v = strings[i];
      if (typeof v !== 'string') throw new Error('a label outside the pack');
      return v;
    };
    const out: (number | QuestionSummary | undefined)[] = [];
    let next = 0;
    for (let at = 0; at < nums.length; at += PACKED_WIDTH) {
      const kind = nums[at];
      if (kind === PACK_NONE) out.push(undefined);
      else if (kind === PACK_OBJECT) {
        if (next >= objects.length) throw new Error('an object outside the pack');
        out.push(this.stage(objects[next++] as QuestionSummary));
      } else if (kind === PACK_ROW) {
        const r = this.row();
        this.fill(r, nums, at + 1, (i) => this.strings.id(string(i)));
        out.push(r);
      } else throw new Error('not packed summaries');
    }
    return out;
  }

  /**
   * Takes a summary staged in `from` (`stage`'s result) as the question's of group id `id` in the
   * run index (`keyIds`; a restore adopts every question of a huge run: no key made or looked up).
   */
  adopt(id: number, from: QuestionSummaries, staged: number | QuestionSummary): this {
    const ids = this.ids();
    if (ids !== this.keyIds?.() || !ids.isLive(id)) throw new Error('a summary adopted for a group the run index does not hold');
    if (typeof staged !== 'number') return this.set(ids.key(id), staged);
    this.roomFor(ids.ids);
    let r = this.rowOf[id] - 1;
    if (r < 0) {
      if (this.full.size) this.full.delete(ids.key(id));
      r = this.row();
      this.rowOf[id] = r + 1;
      this.rowCount++;
    }
    this.gate[r] = from.gate[staged];
    this.aurocU[r] = from.aurocU[staged];
    this.aurocPairs[r] = from.aurocPairs[staged];
    this.counts[2 * r] = from.counts[2 * staged];
    this.counts[2 * r + 1] = from.counts[2 * staged + 1];
    const label = from.labels[2 * staged];
    const majority = from.labels[2 * staged + 1];
    this.labels[2 * r] = this.strings.id(label < 0 ? null : from.strings.strings[label]);
    this.labels[2 * r + 1] = this.strings.id(majority < 0 ? null : from.strings.strings[majority]);
    this.regime[r] = from.regime[staged];
    this.checked[r] = from.checked[staged];
    this.flags[r] = from.flags[staged];
    this.rescued[r] = from.rescued[staged];
    return this;
  }

  /** Room for `rows` light summaries in all (a restore knows how many questions it brings: no doubling's slack). */
  reserve(rows: number): void {
    const ids = this.ids();
    if (ids === this.own) ids.reserve(rows, 0);
    // under the index: its ids are there already (a restore's groups are held before their summaries)
    this.roomFor(Math.max(rows, ids.ids));
    if (rows > this.cap) this.grow(rows);
  }

  private row(): number {
    const r = this.free.pop() ?? this.used++;
    if (r >= this.cap) this.grow(Math.max(1024, this.cap * 2));
    return r;
  }

  /** Writes a light summary to a new row; returns the row. */
  private write(s: QuestionSummary): number {
    const r = this.row();
    encodeRow(s, this.strings, SCRATCH, 0);
    this.fill(r, SCRATCH, 0, (i) => i);
    return r;
  }

  /** Row r from an encoded row (`encodeRow`); `label`: a label's number there → its number here. Throws on a row the columns cannot hold. */
  private fill(r: number, nums: Float64Array, at: number, label: (i: number) => number): void {
    const bits = nums[at + 7];
    const regime = (bits >>> 8) & 0xff;
    const checked = (bits >>> 16) & 0xff;
    if (regime >= REGIMES.length || checked >= OPERATOR_IDS.length) throw new Error('a summary outside the columns');
    this.gate[r] = nums[at];
    this.aurocU[r] = nums[at + 1];
    this.aurocPairs[r] = nums[at + 2];
    this.counts[2 * r] = nums[at + 3];
    this.counts[2 * r + 1] = nums[at + 4];
    this.labels[2 * r] = label(nums[at + 5]);
    this.labels[2 * r + 1] = label(nums[at + 6]);
    this.flags[r] = bits & 0xff;
    this.regime[r] = regime;
    this.checked[r] = checked;
    this.rescued[r] = nums[at + 8];
  }

  delete(k: GroupKey): boolean {
    if (this.full.delete(k)) return true;
    // the row may be under an id its group no longer has (deleted from the index, held again since)
    const ids = this.ids();
    let found = false;
    for (let id = ids.id(k); id >= 0; id = ids.previous(id)) {
      if (id >= this.rowOf.length || this.rowOf[id] === 0) continue;
      this.free.push(this.rowOf[id] - 1);
      this.rowOf[id] = 0;
      this.rowCount--;
      found = true;
    }
    if (found && ids === this.own) ids.retire(ids.liveId(k));
    return found;
  }

  clear(): void {
    this.full.clear();
    this.dropRows();
    if (this.bound === this.own) this.own.clear();
  }

  /** The ids with a light summary, in id order. */
  private *rowIds(): IterableIterator<number> {
    const ids = this.ids();
    const n = Math.min(this.rowOf.length, ids.ids);
    for (let id = 0; id < n; id++) if (this.rowOf[id] > 0) yield id;
  }

  *keys(): IterableIterator<GroupKey> {
    yield* this.full.keys();
    for (const id of this.rowIds()) yield this.bound.key(id);
  }

  /** Every summary (a light one built anew: do not keep them all). */
  *values(): IterableIterator<QuestionSummary> {
    for (const [, s] of this) yield s;
  }

  *entries(): IterableIterator<[GroupKey, QuestionSummary]> {
    yield* this.full.entries();
    for (const id of this.rowIds()) yield [this.bound.key(id), this.build(this.rowOf[id] - 1)];
  }

  [Symbol.iterator](): IterableIterator<[GroupKey, QuestionSummary]> {
    return this.entries();
  }

  private build(r: number): QuestionSummary {
    const f = this.flags[r];
    const rescuedBy: OperatorId[] = [];
    for (let i = 0, bits = this.rescued[r]; bits; i++, bits >>>= 1) if (bits & 1) rescuedBy.push(OPERATOR_IDS[i]);
    const label = this.labels[2 * r];
    const majority = this.labels[2 * r + 1];
    const s: QuestionSummary = {
      regime: REGIMES[this.regime[r]],
      overturn: (f & F_OVERTURN) !== 0,
      gate: this.gate[r],
      mismatches: this.counts[2 * r + 1],
      label: label < 0 ? null : this.strings.strings[label],
      majorityLabel: majority < 0 ? null : this.strings.strings[majority],
      n: this.counts[2 * r],
      digest: { degenerate: (f & F_DEGENERATE) !== 0, plurality: (f & F_PLURALITY) !== 0, rescuedBy },
      healthSaved: true,
    };
    if (f & F_AUROC) s.digest.auroc = { u: this.aurocU[r], pairs: this.aurocPairs[r] };
    if (f & F_CHECKED) s.checkedAgainst = OPERATOR_IDS[this.checked[r]];
    return s;
  }

  private grow(cap: number): void {
    const f64 = (a: Float64Array, w = 1) => {
      const b = new Float64Array(cap * w);
      b.set(a);
      return b;
    };
    this.gate = f64(this.gate);
    this.aurocU = f64(this.aurocU);
    this.aurocPairs = f64(this.aurocPairs);
    const counts = new Uint32Array(cap * 2);
    counts.set(this.counts);
    this.counts = counts;
    const labels = new Int32Array(cap * 2);
    labels.set(this.labels);
    this.labels = labels;
    for (const name of ['flags', 'regime', 'checked'] as const) {
      const b = new Uint8Array(cap);
      b.set(this[name]);
      this[name] = b;
    }
    const rescued = new Uint32Array(cap);
    rescued.set(this.rescued);
    this.rescued = rescued;
    this.cap = cap;
  }
}
