// A run in run order — steps ascending, first-record order within a step — the one order every
// run-wide pass walks: the background scoring (MS-TTRL's outcome cache follows it, as the training
// loop did), the what-if engine's re-scores, sweeps and dashboard (their `RunSource`,
// run-source.ts), the health records a save or the status bar analyses, and the check that every
// question has its summary. Changing the order of a run's groups is a change here only.
import type { GroupKey } from '../../logs/log-layer';
import type { RunItem } from '../workers/runtime';
import { displayQuestionId, type RunEntry } from './run-entry';

/** Every question key of a run in run order, read by position (ids end to end: no string per group held). */
export function runOrder(run: RunEntry): { length: number; at(i: number): GroupKey; id(i: number): number } {
  const lists = [...run.steps.values()];
  const ids = new Int32Array(lists.reduce((n, l) => n + l.length, 0));
  let at = 0;
  for (const l of lists) {
    ids.set(l.ids, at);
    at += l.length;
  }
  const index = run.index;
  return { length: ids.length, at: (i) => index!.keyOf(ids[i]), id: (i) => ids[i] };
}

/** A group of the run as the worker runtime takes it: identity, version, and how to read its entry (a cold group's roll-outs come back from the saved index). */
export function runItem(run: RunEntry, k: GroupKey): RunItem | undefined {
  const index = run.index;
  const e = index?.head(k);
  if (!index || !e) return undefined;
  return { key: k, version: e.version, step: e.step, questionId: displayQuestionId(e), entry: () => index.group(k) };
}

/** The run's complete groups in run order. */
export function completeItems(run: RunEntry): RunItem[] {
  const out: RunItem[] = [];
  const index = run.index;
  if (!index) return out;
  const order = runOrder(run);
  for (let i = 0; i < order.length; i++) {
    const k = order.at(i);
    if (!index.head(k)?.complete) continue;
    const item = runItem(run, k);
    if (item) out.push(item);
  }
  return out;
}
