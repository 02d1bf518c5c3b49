// A step's question keys as the run index's group ids (RunIndex `idOf`/`keyOf`, the table's key
// index: group-table.ts): a huge run's keys as strings in per-step arrays would be ~50 bytes a
// group on the extension host's heap; here 4. A key is made when it is read (the steps and
// questions in view).
import type { GroupKey, RunIndex } from '../../logs/log-layer';

/** What a list needs of the run index: a key from its id. */
export type KeyOf = Pick<RunIndex, 'keyOf'>;

export class StepKeys implements Iterable<GroupKey> {
  constructor(
    private readonly index: KeyOf,
    readonly ids: Int32Array,
  ) {}

  get length(): number {
    return this.ids.length;
  }

  at(i: number): GroupKey | undefined {
    return i >= 0 && i < this.ids.length ? this.index.keyOf(this.ids[i]) : undefined;
  }

  *[Symbol.iterator](): IterableIterator<GroupKey> {
    for (const id of this.ids) yield this.index.keyOf(id);
  }

  /** These, then `more`: a new list (a list is never changed: the store's lookups are kept by list). */
  concat(more: readonly number[]): StepKeys {
    const ids = new Int32Array(this.ids.length + more.length);
    ids.set(this.ids);
    ids.set(more, this.ids.length);
    return new StepKeys(this.index, ids);
  }
}
