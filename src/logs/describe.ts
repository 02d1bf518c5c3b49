// Small shared wording and arithmetic of the log layer's notices.
import { relative } from 'node:path';
import type { Notice } from './log-types.js';

export function describeGroup(g: { run?: string; step: number; questionId: string }): string {
  return `${g.run ? g.run + ' ' : ''}step ${g.step} question ${g.questionId}`;
}

/** Modal size of a list of sizes (ties: the larger). */
export function modalSize(sizes: Iterable<number>): number | undefined {
  const h = new Map<number, number>();
  for (const s of sizes) h.set(s, (h.get(s) ?? 0) + 1);
  let best: number | undefined;
  let bestN = 0;
  for (const [s, n] of h) if (n > bestN || (n === bestN && best !== undefined && s > best)) [best, bestN] = [s, n];
  return best;
}

/** Sums up the files of a run folder skipped because they are not logs (one line, never per file). */
export function notLogSummary(root: string, files: string[]): Notice | undefined {
  if (!files.length) return undefined;
  const names = files.slice(0, 4).map((f) => relative(root, f) || f);
  return { level: 'info', message: `${root}: ${files.length} file${files.length > 1 ? 's' : ''} that ${files.length > 1 ? 'are' : 'is'} not logs skipped (${names.join(', ')}${files.length > 4 ? ', …' : ''})`, file: root };
}
