// Run health in the extension host (docs/health.md): the run's health is analysed from the
// per-question records the background scoring already keeps (QuestionSummary.health), by the same
// engine function as `consensus-lens health` and the dashboard. Pure: no 'vscode'.
import { analyseRun, labelFreeCopies, premiseCheck, type AurocCounts, type GroupHealth, type PremiseCheck, type RunHealth } from '../../engine';
import type { QuestionSummary } from '../model/scoring';

export function healthRecords(summaries: Iterable<QuestionSummary | undefined>): GroupHealth[] {
  const out: GroupHealth[] = [];
  for (const s of summaries) if (s?.health) out.push(s.health);
  return out;
}

/** The confidence premise over the questions scored so far (cheap: no change-point tests; from every summary's digest). */
export function runPremise(summaries: Iterable<QuestionSummary | undefined>): PremiseCheck {
  const counts: (AurocCounts | undefined)[] = [];
  for (const s of summaries) if (s) counts.push(s.digest.auroc);
  return premiseCheck(counts, "the vote's class");
}

/**
 * The run's health, recomputed at most every `minIntervalMs` while the run grows (a live run's
 * background scoring reports progress many times a second; the analysis runs permutation tests),
 * off the caller's path: the records may have to be read back from a saved index (RunStore), so a
 * refresh runs in the background and `onRefreshed` says when a newer analysis is there.
 */
export class RunHealthCache {
  private readonly entries = new Map<string, { size: number; at: number; health: RunHealth }>();
  private readonly running = new Map<string, Promise<void>>();
  constructor(
    private readonly minIntervalMs = 2000,
    private readonly onRefreshed: (runId: string) => void = () => undefined,
    /** The analysis itself (the extension: on a worker thread). */
    private readonly analyse: (records: readonly GroupHealth[]) => Promise<RunHealth> = async (rs) => analyseRun(labelFreeCopies(rs)),
  ) {}

  /**
   * The latest analysis (null until the first is done), and whether a newer one is due. `size`:
   * the questions scored now; `records`: all their health records; `seed`: an analysis saved with a
   * restored run, used while it is for `size` questions.
   */
  get(runId: string, size: number, records: () => Promise<GroupHealth[]>, now = Date.now(), seed?: { size: number; health: RunHealth }): { health: RunHealth | null; stale: boolean } {
    let e = this.entries.get(runId);
    if (!e && seed && seed.size === size) this.entries.set(runId, (e = { size, at: now, health: seed.health }));
    if (e && (e.size === size || now - e.at < this.minIntervalMs)) return { health: e.health, stale: e.size !== size };
    if (!this.running.has(runId)) {
      const job = records()
        .then((rs) => this.analyse(rs))
        .then((health) => {
          this.entries.set(runId, { size, at: now, health });
          this.onRefreshed(runId);
        })
        .catch(() => undefined)
        .finally(() => this.running.delete(runId));
      this.running.set(runId, job);
    }
    return { health: e?.health ?? null, stale: true };
  }

  /** Resolves when no refresh is running (tests). */
  async settled(): Promise<void> {
    await Promise.all([...this.running.values()]);
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
