// Run health in the extension host (docs/health.md): the run's health is analysed from the
// per-question records the background scoring already keeps (QuestionSummary.health), by the same
// engine function as `consensus-lens health` and the dashboard. Pure: no 'vscode'.
import { analyseRun, labelFreeCopies, premiseCheck, type GroupHealth, type PremiseCheck, type RunHealth } from '../../engine';
import type { QuestionSummary } from '../scoring';

export function healthRecords(summaries: Iterable<QuestionSummary | undefined>): GroupHealth[] {
  const out: GroupHealth[] = [];
  for (const s of summaries) if (s?.health) out.push(s.health);
  return out;
}

/** The confidence premise over the questions scored so far (cheap: no change-point tests). */
export function runPremise(summaries: Iterable<QuestionSummary | undefined>): PremiseCheck {
  return premiseCheck(
    healthRecords(summaries).map((h) => h.auroc.label),
    "the vote's class",
  );
}

/**
 * The run's health, recomputed at most every `minIntervalMs` while the run grows (a live run's
 * background scoring reports progress many times a second; the analysis runs permutation tests).
 */
export class RunHealthCache {
  private readonly entries = new Map<string, { size: number; at: number; health: RunHealth }>();
  constructor(private readonly minIntervalMs = 2000) {}

  /** The cached analysis, refreshed when the run has new questions and the interval has passed;
   * `stale` says a newer one is due (call again later). */
  get(runId: string, summaries: Map<string, QuestionSummary>, now = Date.now()): { health: RunHealth; stale: boolean } {
    const e = this.entries.get(runId);
    if (e && (e.size === summaries.size || now - e.at < this.minIntervalMs)) return { health: e.health, stale: e.size !== summaries.size };
    const health = analyseRun(labelFreeCopies(healthRecords(summaries.values())));
    this.entries.set(runId, { size: summaries.size, at: now, health });
    return { health, stale: false };
  }

  forget(runId: string): void {
    this.entries.delete(runId);
  }
}

/** The status bar's words for a run's alarms (empty when there are none). */
export function alarmStatus(h: RunHealth): { text: string; tooltip: string } {
  if (!h.alarms.length && !h.rewardBugs.some((b) => b.kind !== 'scaled')) return { text: '', tooltip: '' };
  const bugs = h.rewardBugs.filter((b) => b.kind !== 'scaled');
  const words = [h.alarms.length ? `${h.alarms.length} alarm${h.alarms.length === 1 ? '' : 's'}` : '', bugs.length ? `${bugs.length} reward bug${bugs.length === 1 ? '' : 's'}` : '']
    .filter(Boolean)
    .join(', ');
  const lines = [...h.alarms.map((a) => `alarm: ${a.message}`), ...bugs.map((b) => `reward bug (${b.kind}): ${b.message}`)];
  return { text: `$(warning) ${words}`, tooltip: lines.slice(0, 8).join('\n') + (lines.length > 8 ? `\n… ${lines.length - 8} more` : '') };
}
