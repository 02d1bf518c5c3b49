// The status bar item: the latest step of one run (groups, scored, CoRE overturns, mean gate) and
// its health alarm. Which run: the one the user last picked (explorer, Open Run…, the panel) or,
// when a run has grown since, the run that grew last — the training run being written, not
// whichever run was discovered first.
import * as vscode from 'vscode';
import type { RunEntry, RunStore } from '../model/run-store';
import { statusText, stepStats } from '../format';
import { RunHealthCache, alarmStatus } from './health-status';

export interface StatusHooks {
  /** The run a command without a run argument means (RunDiscovery.primary). */
  primaryRun(): string | undefined;
  /** The run of the question the consensus panel shows. */
  panelRun(): string | undefined;
}

export class RunStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly healthCache = new RunHealthCache(
    2000,
    () => this.update(),
    (rs) => this.store.analyseHealth(rs),
  );
  private healthTimer: NodeJS.Timeout | undefined;
  private picked: { runId: string; at: number } | undefined;
  private lastPanelRun: string | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly store: RunStore,
    private readonly hooks: StatusHooks,
  ) {
    this.item = vscode.window.createStatusBarItem('consensusLens.status', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'Consensus Lens';
    this.item.command = 'workbench.view.extension.consensusLens';
    this.disposables.push(this.item, { dispose: () => this.healthTimer && clearTimeout(this.healthTimer) });
  }

  /** The user picked this run (explorer, Open Run…): show it until another run grows. */
  pick(runId: string): void {
    this.picked = { runId, at: this.store.growthClock };
    this.update();
  }

  private run(): RunEntry | undefined {
    const p = this.hooks.panelRun();
    if (p && p !== this.lastPanelRun) this.picked = { runId: p, at: this.store.growthClock };
    this.lastPanelRun = p;
    const grown = this.store.lastGrown();
    const picked = this.picked;
    const pick = picked && this.store.runs.get(picked.runId);
    if (grown && (!pick || grown.grownAt > picked.at)) return grown;
    return pick ?? this.store.runs.get(this.hooks.primaryRun() ?? '') ?? [...this.store.runs.values()][0];
  }

  update(): void {
    const run = this.run();
    const status = this.item;
    if (!run) return status.hide();
    const step = run.latestStep;
    const keys = step === null ? [] : (run.steps.get(step) ?? []);
    const st = stepStats(
      step,
      Array.from(keys, (k) => run.summaries.get(k)),
    );
    status.text = statusText(run.label, st);
    status.tooltip = `Consensus Lens — ${run.path}\nlatest step ${st.step ?? '—'}: ${st.groups} groups (${st.scored} scored), ${st.overturns} CoRE overturns, mean gate ${st.meanGate?.toFixed(4) ?? '—'}\n${run.groups} groups, ${run.rollouts} roll-outs in the run${run.loading ? '\nreading…' : ''}`;
    // Run health (docs/health.md): say when the run has raised an alarm or shows a reward bug.
    const health = this.healthCache.get(run.id, run.summaries.size, () => this.store.healthRecords(run), Date.now(), run.savedHealth);
    const alarm = health.health ? alarmStatus(health.health) : { text: '', tooltip: '' };
    if (alarm.text) {
      status.text += ` ${alarm.text}`;
      status.tooltip += `\n${alarm.tooltip}\n(Show Run Dashboard for the timeline)`;
    }
    if (health.stale && !this.healthTimer)
      this.healthTimer = setTimeout(() => {
        this.healthTimer = undefined;
        this.update();
      }, 2100);
    status.accessibilityInformation = { label: status.text.replace(/\$\([^)]*\)\s*/g, '') };
    status.show();
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
