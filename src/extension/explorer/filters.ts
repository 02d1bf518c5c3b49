// Explorer filters and sort orders. Pure: no 'vscode'.
import type { QuestionSummary } from '../model/scoring';
import { naturalCompare } from '../../logs/walk';

export type ExplorerFilter = 'all' | 'contested' | 'overturns' | 'mismatches' | 'degenerate';
export type ExplorerSort = 'file' | 'id' | 'gate';

export function matchesFilter(s: QuestionSummary | undefined, filter: ExplorerFilter): boolean {
  switch (filter) {
    case 'all':
      return true;
    case 'contested':
      return s?.regime === 'contested';
    case 'overturns':
      return s?.overturn === true;
    case 'mismatches':
      return (s?.mismatches ?? 0) > 0;
    case 'degenerate':
      // A degenerate plurality, or any empty, truncated or repetition-collapsed roll-out (docs/health.md §1).
      return s?.digest.degenerate === true;
  }
}

/**
 * The visible question keys of a step: in first-record order ('file'), by question id in natural
 * order ('id': "q2" before "q10"; `idOf` gives a key's id), or by ascending gate (the least
 * cohesive consensus first; unscored questions last). Stable.
 */
export function filterQuestions(
  keys: Iterable<string>,
  summary: (k: string) => QuestionSummary | undefined,
  filter: ExplorerFilter,
  sort: ExplorerSort,
  idOf: (k: string) => string = (k) => k,
): string[] {
  const all = [...keys];
  const out = filter === 'all' ? all : all.filter((k) => matchesFilter(summary(k), filter));
  if (sort === 'id') {
    const id = new Map(out.map((k) => [k, idOf(k)]));
    const pos = new Map(out.map((k, i) => [k, i]));
    out.sort((a, b) => naturalCompare(id.get(a)!, id.get(b)!) || pos.get(a)! - pos.get(b)!);
  } else if (sort === 'gate') {
    const gate = (k: string): number => summary(k)?.gate ?? Infinity;
    const pos = new Map(out.map((k, i) => [k, i]));
    out.sort((a, b) => gate(a) - gate(b) || pos.get(a)! - pos.get(b)!);
  }
  return out;
}
