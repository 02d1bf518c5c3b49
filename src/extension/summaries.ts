// The explorer's question summaries of one run, held so that a huge run's summaries cost the host
// little: a summary scored in this process (with its health record) is kept as it is; a light one
// (restored from a saved index, or saved since: its health record is on disk with its group) is
// kept as one row of typed columns (~50 bytes instead of ~300 as an object) and built again as an
// object when it is asked for — the explorer asks for the questions in view. Map-like: the store,
// the explorer and the status bar use it as they would a Map<GroupKey, QuestionSummary>.
import { OPERATOR_IDS, type OperatorId } from '../engine';
import type { GroupKey } from '../logs';
import type { Regime } from '../protocol/messages';
import type { QuestionSummary } from './scoring';

const REGIMES: Regime[] = ['saturated', 'contested', 'competence-floor', 'empty'];
const F_OVERTURN = 1;
const F_DEGENERATE = 2;
const F_PLURALITY = 4;
const F_AUROC = 8;
const F_CHECKED = 16;

/** Kept as a row of the columns: its health record is on disk, and its regime one of the columns'. */
const light = (s: QuestionSummary): boolean => !s.health && !!s.healthSaved && REGIMES.indexOf(s.regime) >= 0;

export class QuestionSummaries implements Iterable<[GroupKey, QuestionSummary]> {
  /** Summaries kept as objects (scored in this process, with their health record). */
  private readonly full = new Map<GroupKey, QuestionSummary>();
  /** Light summaries: their row in the columns. */
  private readonly rows = new Map<GroupKey, number>();
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
  private readonly strings: string[] = [];
  private readonly stringIds = new Map<string, number>();

  get size(): number {
    return this.full.size + this.rows.size;
  }

  has(k: GroupKey): boolean {
    return this.full.has(k) || this.rows.has(k);
  }

  get(k: GroupKey): QuestionSummary | undefined {
    const s = this.full.get(k);
    if (s) return s;
    const r = this.rows.get(k);
    return r === undefined ? undefined : this.build(r);
  }

  set(k: GroupKey, s: QuestionSummary): this {
    this.delete(k);
    if (!light(s)) {
      this.full.set(k, s);
      return this;
    }
    this.rows.set(k, this.write(s));
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

  /** Takes a summary staged in `from` (`stage`'s result) as question k's. */
  adopt(k: GroupKey, from: QuestionSummaries, staged: number | QuestionSummary): this {
    if (typeof staged !== 'number') return this.set(k, staged);
    this.delete(k);
    const r = this.row();
    this.rows.set(k, r);
    this.gate[r] = from.gate[staged];
    this.aurocU[r] = from.aurocU[staged];
    this.aurocPairs[r] = from.aurocPairs[staged];
    this.counts[2 * r] = from.counts[2 * staged];
    this.counts[2 * r + 1] = from.counts[2 * staged + 1];
    const label = from.labels[2 * staged];
    const majority = from.labels[2 * staged + 1];
    this.labels[2 * r] = this.id(label < 0 ? null : from.strings[label]);
    this.labels[2 * r + 1] = this.id(majority < 0 ? null : from.strings[majority]);
    this.regime[r] = from.regime[staged];
    this.checked[r] = from.checked[staged];
    this.flags[r] = from.flags[staged];
    this.rescued[r] = from.rescued[staged];
    return this;
  }

  private row(): number {
    const r = this.free.pop() ?? this.used++;
    if (r >= this.cap) this.grow(Math.max(1024, this.cap * 2));
    return r;
  }

  /** Writes a light summary to a new row; returns the row. */
  private write(s: QuestionSummary): number {
    const r = this.row();
    this.gate[r] = s.gate;
    this.counts[2 * r] = s.n;
    this.counts[2 * r + 1] = s.mismatches;
    this.labels[2 * r] = this.id(s.label);
    this.labels[2 * r + 1] = this.id(s.majorityLabel);
    this.regime[r] = REGIMES.indexOf(s.regime);
    const d = s.digest;
    let f = (s.overturn ? F_OVERTURN : 0) | (d.degenerate ? F_DEGENERATE : 0) | (d.plurality ? F_PLURALITY : 0);
    if (d.auroc) {
      f |= F_AUROC;
      this.aurocU[r] = d.auroc.u;
      this.aurocPairs[r] = d.auroc.pairs;
    }
    if (s.checkedAgainst) {
      f |= F_CHECKED;
      this.checked[r] = OPERATOR_IDS.indexOf(s.checkedAgainst);
    }
    this.flags[r] = f;
    let bits = 0;
    for (const o of d.rescuedBy) bits |= 1 << OPERATOR_IDS.indexOf(o);
    this.rescued[r] = bits;
    return r;
  }

  delete(k: GroupKey): boolean {
    if (this.full.delete(k)) return true;
    const r = this.rows.get(k);
    if (r === undefined) return false;
    this.rows.delete(k);
    this.free.push(r);
    return true;
  }

  clear(): void {
    this.full.clear();
    this.rows.clear();
    this.free = [];
    this.used = 0;
  }

  *keys(): IterableIterator<GroupKey> {
    yield* this.full.keys();
    yield* this.rows.keys();
  }

  /** Every summary (a light one built anew: do not keep them all). */
  *values(): IterableIterator<QuestionSummary> {
    for (const [, s] of this) yield s;
  }

  *entries(): IterableIterator<[GroupKey, QuestionSummary]> {
    yield* this.full.entries();
    for (const [k, r] of this.rows) yield [k, this.build(r)];
  }

  [Symbol.iterator](): IterableIterator<[GroupKey, QuestionSummary]> {
    return this.entries();
  }

  private id(s: string | null): number {
    if (s === null) return -1;
    let i = this.stringIds.get(s);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(s);
      this.stringIds.set(s, i);
    }
    return i;
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
      label: label < 0 ? null : this.strings[label],
      majorityLabel: majority < 0 ? null : this.strings[majority],
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
