// A run's step arrangement: steps ascending, each with its question keys (the index's group ids:
// step-keys.ts) in first-record order, and the run's group and roll-out counts. Rebuilt whole at
// open (in slices) and when groups went; after an ordinary index change, only the steps it touched.
// The owner (run-store.ts) calls `rebuildSliced` at open and `change` on every index change.
import type { GroupHead, GroupKey, GroupSize, RunChange } from '../../logs/log-layer';
import { TimeSlice } from '../../util/slice';
import type { RunEntry } from './run-entry';
import { StepKeys, type KeyOf } from './step-keys';

export class StepArrangement {
  /** `whole`: how `change` rebuilds a run whole when it must (the owner's `rebuild`, which calls `rebuild` here). */
  constructor(private readonly whole: (run: RunEntry) => void = (run) => this.rebuild(run)) {}

  /** Per run: how many times its step index was rebuilt (a sliced rebuild overtaken by another stops). */
  private readonly rebuilds = new WeakMap<RunEntry, number>();

  /**
   * `rebuild` at open, in slices (a huge restored run is one pass over every group); abandoned
   * when an index change rebuilt the run meanwhile (that rebuild saw the newer groups).
   */
  async rebuildSliced(run: RunEntry): Promise<void> {
    const index = run.index;
    if (!index) return;
    const at = (this.rebuilds.get(run) ?? 0) + 1;
    this.rebuilds.set(run, at);
    const pass = arrange(index.sizes(), index);
    const slice = new TimeSlice();
    this.slicing.set(run, at);
    try {
      for (let r = pass.next(); ; r = pass.next()) {
        if (r.done) return void this.arranged(run, r.value);
        if (!slice.due) continue;
        await slice.next();
        if (this.rebuilds.get(run) !== at) return;
      }
    } finally {
      if (this.slicing.get(run) === at) this.slicing.delete(run);
    }
  }

  /** Runs whose sliced rebuild is under way (an index change meanwhile rebuilds the run whole). */
  private readonly slicing = new WeakMap<RunEntry, number>();

  /** The step → question index of a run (one pass over the index's heads). */
  rebuild(run: RunEntry): void {
    const index = run.index;
    if (!index) return;
    this.rebuilds.set(run, (this.rebuilds.get(run) ?? 0) + 1);
    const pass = arrange(index.sizes(), index);
    for (let r = pass.next(); ; r = pass.next()) if (r.done) return void this.arranged(run, r.value);
  }

  /** Per run: the roll-outs of each step, as last counted (`change` recounts the steps a change touches). */
  private readonly stepRollouts = new WeakMap<RunEntry, Map<number, number>>();

  private arranged(run: RunEntry, a: Arranged): void {
    run.steps = a.steps;
    run.groups = a.groups;
    run.rollouts = a.rollouts;
    run.latestStep = a.latestStep;
    this.stepRollouts.set(run, a.stepRollouts);
  }

  /**
   * The step → question index after an index change, in the cost of what changed: new groups go to
   * the end of their steps' lists (the index keeps groups in first-record order, and appends a new
   * one), and the steps touched are counted again. The same index as a rebuild's, which runs
   * instead when groups went, the index re-sorted them, a sliced rebuild is under way (it began
   * before these groups), or the count of groups disagrees with the index's (a group announced
   * twice, or one gone unannounced). A followed huge run's change
   * (a step's new groups, a group completed) costs the host those groups, not a pass over the run.
   */
  change(run: RunEntry, ch: RunChange): void {
    const index = run.index;
    const counts = this.stepRollouts.get(run);
    if (!index || !counts || ch.removed.length || ch.rearranged || this.slicing.has(run)) return this.whole(run);
    const touched = new Map<number, number[]>();
    const touch = (k: GroupKey): GroupHead | undefined => {
      const h = index.head(k);
      if (h && !touched.has(h.step)) touched.set(h.step, []);
      return h;
    };
    for (const k of ch.added) {
      const h = touch(k);
      if (h) touched.get(h.step)!.push(index.idOf(k));
    }
    for (const k of ch.changed) touch(k);
    for (const k of ch.completed) touch(k);
    for (const k of ch.grown) touch(k);
    let steps = run.steps;
    let groups = run.groups;
    let rollouts = run.rollouts;
    let newStep = false;
    for (const [step, added] of touched) {
      const old = steps.get(step);
      let list = old;
      if (added.length) {
        if (steps === run.steps) steps = new Map(steps); // a change makes new maps and lists (`groupKey` caches by list)
        list = old ? old.concat(added) : new StepKeys(index, Int32Array.from(added));
        if (!old) newStep = true;
        steps.set(step, list);
        groups += added.length;
      }
      if (!list) continue;
      let n = 0;
      for (const k of list) n += index.head(k)?.n ?? 0; // never rolloutsOf: an index change must not build roll-outs
      rollouts += n - (counts.get(step) ?? 0);
      counts.set(step, n);
    }
    if (groups !== index.size) return this.whole(run);
    this.rebuilds.set(run, (this.rebuilds.get(run) ?? 0) + 1);
    if (newStep) steps = new Map([...steps].sort((a, b) => a[0] - b[0]));
    run.steps = steps;
    run.groups = groups;
    run.rollouts = rollouts;
    if (newStep) run.latestStep = Math.max(...steps.keys());
  }
}

type Arranged = Pick<RunEntry, 'steps' | 'groups' | 'rollouts' | 'latestStep'> & { stepRollouts: Map<number, number> };

/** A run's steps (ascending, each with its question keys in first-record order), question keys and size, from its groups' sizes; yields every 256 groups. */
function* arrange(sizes: Iterable<GroupSize>, index: KeyOf): Generator<void, Arranged> {
  const ids = new Map<number, number[]>();
  const stepRollouts = new Map<number, number>();
  let rollouts = 0;
  let groups = 0;
  for (const e of sizes) {
    let list = ids.get(e.step);
    if (!list) ids.set(e.step, (list = []));
    list.push(e.id);
    rollouts += e.n; // never rolloutsOf: an index change must not build every roll-out
    stepRollouts.set(e.step, (stepRollouts.get(e.step) ?? 0) + e.n);
    if ((++groups & 255) === 0) yield;
  }
  const sorted = new Map([...ids.entries()].sort((a, b) => a[0] - b[0]).map(([step, list]) => [step, new StepKeys(index, Int32Array.from(list))] as const));
  return { steps: sorted, groups, rollouts, latestStep: sorted.size ? Math.max(...sorted.keys()) : null, stepRollouts };
}
