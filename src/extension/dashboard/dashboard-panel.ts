// The run dashboard (consensusLens.showDashboard): one webview per window with per-step
// charts, the regime breakdown, the recovery-region plot, the κ × τ sweep heatmap, the operator
// agreement matrix and the last re-score. Every number is computed by the what-if workers
// (src/extension/workers) on cached features; the webview draws them (webview/dashboard).
// Live: while the run grows, the model is recomputed (debounced) and re-sent.
import * as vscode from 'vscode';
import { OPERATOR_IDS, type OperatorId } from '../../engine';
import { DASHBOARD_PROTOCOL, parseDashMessage, type DashHostMessage, type DashModel, type DashSweep } from '../../protocol/dashboard-messages';
import type { QuestionKey } from '../../protocol/messages';
import { WebviewPanelBase } from '../webview-panel';
import type { RunStore } from '../model/run-store';
import { storeSource } from '../model/run-source';
import type { WhatIfController } from '../whatif/whatif-controller';
import { dashboardModel, dashboardRecords } from './dashboard-model';
import { errorMessage } from '../../util/errors';
import { LatestJob } from '../util/latest-job';

export const DASHBOARD_VIEW_TYPE = 'consensusLens.dashboard';

export interface DashboardHost {
  store: RunStore;
  whatIf: WhatIfController;
  /** The operator the user named (undefined: each group's logged one, else majority). */
  configuredOperator(): OperatorId | undefined;
  configuredParams(): Record<string, number>;
  openQuestion(key: QuestionKey): void;
  log(message: string): void;
}

export const SWEEP_KAPPAS = [0, 0.2, 0.4, 0.6, 0.8, 1];
export const SWEEP_TAUS = [0.05, 0.1, 0.25, 0.5, 1, 2];

export class DashboardPanel extends WebviewPanelBase<DashHostMessage> {
  private static current: DashboardPanel | undefined;
  private runId: string | null = null;
  private readonly job = new LatestJob(() => this.compute());
  /** The last model sent (tests read it through the extension's API). */
  model: DashModel | null = null;

  static get instance(): DashboardPanel | undefined {
    return DashboardPanel.current;
  }

  static show(extensionUri: vscode.Uri, host: DashboardHost, runId?: string): DashboardPanel {
    if (!DashboardPanel.current) {
      const panel = vscode.window.createWebviewPanel(DASHBOARD_VIEW_TYPE, 'Run Dashboard', { viewColumn: vscode.ViewColumn.Active, preserveFocus: false }, DashboardPanel.options(extensionUri));
      DashboardPanel.current = new DashboardPanel(panel, extensionUri, host);
    } else DashboardPanel.current.panel.reveal(undefined, false);
    const d = DashboardPanel.current;
    const id = runId ?? d.runId ?? [...host.store.runs.keys()][0] ?? null;
    if (id && id !== d.runId) d.selectRun(id);
    return d;
  }

  static revive(panel: vscode.WebviewPanel, extensionUri: vscode.Uri, host: DashboardHost): DashboardPanel {
    DashboardPanel.current?.dispose();
    panel.webview.options = DashboardPanel.options(extensionUri);
    DashboardPanel.current = new DashboardPanel(panel, extensionUri, host);
    return DashboardPanel.current;
  }

  private static options(extensionUri: vscode.Uri): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return { ...WebviewPanelBase.webviewOptions(extensionUri), retainContextWhenHidden: false };
  }

  private constructor(
    panel: vscode.WebviewPanel,
    extensionUri: vscode.Uri,
    private readonly host: DashboardHost,
  ) {
    super(panel, extensionUri, { bundle: 'dashboard', title: 'Run Dashboard' });
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'activity.svg');
    this.disposables.push(
      host.store.onChange((e) => {
        if (e.kind === 'runs') return this.post(this.initMessage());
        if (e.kind === 'run' && e.runId === this.runId && e.changed.length) this.schedule(1500);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        // Other parameters or another configured operator: the read-outs change.
        if (e.affectsConfiguration('consensusLens.params') || e.affectsConfiguration('consensusLens.defaultOperator') || e.affectsConfiguration('consensusLens.advantage')) {
          this.post(this.initMessage());
          this.schedule(300);
        }
      }),
      host.whatIf.onDidChange((id) => {
        if (id === this.runId) this.post({ type: 'whatif', whatif: host.whatIf.summary(id) });
      }),
    );
    this.render();
  }

  get run(): string | null {
    return this.runId;
  }

  selectRun(runId: string): void {
    this.runId = runId;
    const run = this.host.store.runs.get(runId);
    this.panel.title = `Dashboard · ${run?.label ?? runId}`;
    this.post(this.initMessage());
    this.post({ type: 'whatif', whatif: this.host.whatIf.summary(runId) });
    this.schedule(0);
  }

  private initMessage(): DashHostMessage {
    return {
      type: 'init',
      protocol: DASHBOARD_PROTOCOL,
      runs: [...this.host.store.runs.values()].map((r) => ({ id: r.id, label: r.label })),
      runId: this.runId,
      operators: [...OPERATOR_IDS],
      params: this.host.configuredParams(),
      configured: this.host.configuredOperator() ?? 'majority',
    };
  }

  /** Recomputes the model (debounced; one computation at a time). */
  schedule(ms: number): void {
    this.job.schedule(ms);
  }

  private async compute(): Promise<void> {
    const runId = this.runId;
    const run = runId ? this.host.store.runs.get(runId) : undefined;
    if (!run) return;
    this.post({ type: 'busy', what: 'scoring the run' });
    try {
      await this.host.store.idle();
      const data = await this.host.whatIf.engine.dashboard(storeSource(this.host.store, run), this.host.configuredParams(), this.host.configuredOperator(), {
        cancelled: () => this.runId !== runId || this.disposed,
      });
      if (data.cancelled || this.runId !== runId) return;
      const health = await this.host.store.analyseHealth(dashboardRecords(data));
      if (this.runId !== runId || this.disposed) return;
      this.model = dashboardModel(data, health);
      this.post({ type: 'model', model: this.model, live: !!run.index && run.index.mode !== 'static' });
      this.host.log(
        `dashboard of ${run.label}: ${data.rows.length} groups in ${data.ms.toFixed(0)} ms${data.failed.length ? `; ${data.failed.length} could not be scored (e.g. step ${data.failed[0].step}, ${data.failed[0].questionId}: ${data.failed[0].message})` : ''}`,
      );
    } catch (e) {
      this.post({ type: 'error', message: errorMessage(e) });
    } finally {
      this.post({ type: 'busy', what: null });
    }
  }

  private async sweep(operator: OperatorId): Promise<void> {
    const runId = this.runId;
    const run = runId ? this.host.store.runs.get(runId) : undefined;
    if (!run) return;
    await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Sweeping κ × τ on ${run.label} (${operator})`, cancellable: true }, async (progress, token) => {
      let last = 0;
      const r = await this.host.whatIf.engine.sweep(storeSource(this.host.store, run), operator, this.host.configuredParams(), SWEEP_KAPPAS, SWEEP_TAUS, {
        cancelled: () => token.isCancellationRequested,
        progress: (done, total) => {
          const pct = total ? (100 * done) / total : 100;
          progress.report({ message: `${done}/${total} groups × ${SWEEP_KAPPAS.length * SWEEP_TAUS.length} settings`, increment: pct - last });
          last = pct;
        },
      });
      if (!r.cancelled) this.post({ type: 'sweep', sweep: { runId: r.runId, operator: r.operator, kappas: r.kappas, taus: r.taus, cells: r.cells, ms: r.ms } });
      this.host.log(`κ × τ sweep of ${run.label} (${operator}): ${r.ms.toFixed(0)} ms${r.cancelled ? ' (cancelled)' : ''}`);
    });
  }

  /** Shows a sweep computed elsewhere (a cluster sweep's result file) for the run shown. */
  showSweep(sweep: DashSweep): void {
    this.post({ type: 'sweep', sweep });
  }

  /** While the webview loads, the newest message of each kind is the one that counts. */
  protected supersedes(queued: DashHostMessage, next: DashHostMessage): boolean {
    return queued.type === next.type;
  }

  protected onMessage(raw: unknown): void {
    const m = parseDashMessage(raw);
    if (!m) return this.host.log(`ignored a malformed message from the dashboard: ${JSON.stringify(raw)?.slice(0, 200)}`);
    switch (m.type) {
      case 'ready': {
        const queued = this.becomeReady();
        this.send(this.initMessage());
        if (this.model && this.model.runId === this.runId && !queued.some((q) => q.type === 'model')) this.send({ type: 'model', model: this.model, live: false });
        if (this.runId && !queued.some((q) => q.type === 'whatif')) this.send({ type: 'whatif', whatif: this.host.whatIf.summary(this.runId) });
        for (const q of queued) if (q.type !== 'init') this.send(q);
        if (!this.runId) {
          const first = [...this.host.store.runs.keys()][0];
          if (first) this.selectRun(first);
        } else if (!this.model) this.schedule(0);
        return;
      }
      case 'selectRun':
        if (this.host.store.runs.has(m.runId)) this.selectRun(m.runId);
        return;
      case 'openQuestion':
        if (this.runId) this.host.openQuestion({ runId: this.runId, step: m.step, questionId: m.questionId });
        return;
      case 'runSweep':
        void this.sweep(m.operator);
        return;
      case 'rescore':
        if (this.runId) void vscode.commands.executeCommand('consensusLens.rescoreRun', this.runId);
        return;
      case 'export':
        if (this.runId) void this.host.whatIf.exportLast(this.runId);
        return;
      case 'compareWith':
        // Only runs the store has (the webview's word names no path); the same run asks for two operators.
        if (this.runId && this.host.store.runs.has(m.runId)) void vscode.commands.executeCommand('consensusLens.compareRuns', this.runId, m.runId);
        return;
    }
  }

  protected override onDispose(): void {
    if (DashboardPanel.current === this) DashboardPanel.current = undefined;
    this.job.dispose();
  }
}
