// The one way a group of a followed run becomes features: load (its roll-outs' texts read back
// from the log by offset) → prepare (answers, classes, TF-IDF, the run-health text measures, while
// the texts are at hand) → previews (only when a view asked). A worker's shard caches the result
// under the group's key and version (whatif-shard.ts `load`); the store's in-process fallback
// (tests, no worker threads) calls `prepareEntry`. Never the host: no 'vscode', no src/extension.
import { prepareGroup, preview, type Group, type PreparedGroup } from '../../engine';
import { entryToGroup, readRolloutText, rolloutsOf, type GroupEntry } from '../../logs/log-layer';

/** A group with its texts, read back from the log in roll-out order. */
export async function loadGroup(entry: GroupEntry, questionId: string): Promise<Group> {
  const rollouts = rolloutsOf(entry);
  const texts: string[] = [];
  for (const r of rollouts) texts.push(await readRolloutText(r.source, entry.version));
  return { ...entryToGroup(entry, texts, rollouts), questionId };
}

/** A loaded group's features, with the run-health text measures (docs/health.md). */
export function prepareLoaded(group: Group, maxGroupSize?: number): PreparedGroup {
  return prepareGroup(group, { health: true, maxGroupSize });
}

export function previewsOf(group: Group): string[] {
  return group.rollouts.map((r) => preview(r.response ?? ''));
}

/** Load → prepare (→ previews) in this thread: the store's path when it was given no worker threads. */
export async function prepareEntry(entry: GroupEntry, questionId: string, previews: boolean): Promise<{ prepared: PreparedGroup; previews: string[] }> {
  const group = await loadGroup(entry, questionId);
  return { prepared: prepareLoaded(group), previews: previews ? previewsOf(group) : [] };
}
