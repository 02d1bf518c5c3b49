// Runs side by side and log files opened as runs (README "Comparing runs"): the run view is a
// webview (webview/compare) that draws one run's per-step series, alarms and learning signal, or
// two runs' (or two operators' on one run) on one step axis with the questions where their
// labels part; clicking one shows the question in both runs side by side. Opened by
// *Compare Runs…* (command palette, the explorer's run context menu) and, for one run, by the
// read-only custom editor "Consensus Lens Run" (Open With… on a *.jsonl / *.parquet log).
// The numbers: the what-if workers' per-group health records (src/extension/workers), through
// src/extension/workers/run-view-builder.ts and src/engine/analysis/runs-compare.ts.
import { groundTruthSetting } from '../settings';
import * as vscode from 'vscode';
import { errorMessage } from '../../util/errors';
import { escapeHtml } from '../../util/html';
import { whyNotARun } from '../runs/recognise';
import { LatestJob } from '../util/latest-job';
import { OPERATOR_FAMILIES, OPERATOR_IDS, OPERATOR_LABELS, type OperatorId } from '../../engine';
import { parseCompareMessage, type CompareHostMessage, type RunViewModel } from '../../protocol/compare-messages';
import { WebviewPanelBase } from '../webview-panel';
import type { RunStore } from '../model/run-store';
import { storeSource } from '../model/run-source';
import { buildView, outcomeContext } from '../model/scoring';
import type { WhatIfController } from '../whatif/whatif-controller';
import { pairSide } from './run-view-model';
import type { QuestionKey } from '../../protocol/messages';

export const COMPARE_VIEW_TYPE = 'consensusLens.compare';
export const LOG_EDITOR_VIEW_TYPE = 'consensusLens.logFile';

export interface CompareDeps {
  store: RunStore;
  whatIf: WhatIfController;
  configuredOperator(): OperatorId;
  configuredParams(): Record<string, number>;
  /** Follows a run folder or log file; its run id. */
  openRun(path: string): Promise<string | undefined>;
  openQuestion(key: QuestionKey): void;
  openDashboard(runId: string): void;
  log(message: string): void;
}

interface Side {
  runId: string;
  operator: OperatorId;
}

/** One run view in a webview panel (a compare panel or a custom editor's). */
export class RunView extends WebviewPanelBase<CompareHostMessage> {
  private static readonly views = new Set<RunView>();
  private readonly job = new LatestJob(() => this.compute());
  /** The last model sent (the e2e tests read it through the extension's API). */
  model: RunViewModel | null = null;

  static get all(): readonly RunView[] {
    return [...RunView.views];
  }

  constructor(
    panel: vscode.WebviewPanel,
    extensionUri: vscode.Uri,
    private readonly deps: CompareDeps,
    private sides: Side[],
  ) {
    super(panel, extensionUri, { bundle: 'compare' });
    // The panel is VS Code's (a custom editor's) or its command's: closing it disposes the view.
    this.disposesPanel = false;
    RunView.views.add(this);
    panel.webview.options = WebviewPanelBase.webviewOptions(extensionUri);
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'activity.svg');
    this.disposables.push(
      deps.store.onChange((e) => {
        if (e.kind === 'run' && this.sides.some((s) => s.runId === e.runId) && e.changed.length) this.schedule(1500);
      }),
    );
    this.panel.title = this.title();
    this.render(this.title());
    this.schedule(0);
  }

  private label(runId: string): string {
    return this.deps.store.runs.get(runId)?.label ?? runId;
  }

  private title(): string {
    const [a, b] = this.sides;
    if (!b) return `Run · ${this.label(a.runId)}`;
    return a.runId === b.runId ? `${this.label(a.runId)}: ${a.operator} vs ${b.operator}` : `${this.label(a.runId)} vs ${this.label(b.runId)}`;
  }

  setSides(sides: Side[]): void {
    this.sides = sides;
    this.panel.title = this.title();
    this.schedule(0);
  }

  private schedule(ms: number): void {
    this.job.schedule(ms);
  }

  private async compute(): Promise<void> {
    const sides = this.sides;
    this.post({ type: 'busy', what: sides.length > 1 ? 'scoring both runs' : 'scoring the run' });
    try {
      await this.deps.store.idle();
      const out = [];
      for (const s of sides) {
        const run = this.deps.store.runs.get(s.runId);
        if (!run) throw new Error(`the run ${s.runId} is no longer open`);
        const data = await this.deps.whatIf.engine.dashboard(storeSource(this.deps.store, run), this.deps.configuredParams(), s.operator, { cancelled: () => this.disposed || this.sides !== sides });
        if (data.cancelled || this.sides !== sides) return;
        out.push({ name: run.label, operator: s.operator, records: data.rows.flatMap((r) => (r.health ? [r.health] : [])) });
      }
      // analysed and compared on a worker thread: seconds of permutation tests on a long run
      const view = await this.deps.whatIf.engine.runView(
        out,
        sides.map((s) => s.runId),
        groundTruthSetting(),
      );
      if (this.disposed || this.sides !== sides) return;
      for (const m of view.warnings) this.deps.log(m);
      this.model = view.model;
      this.post({ type: 'model', model: this.model });
      this.panel.title = this.title();
    } catch (e) {
      this.post({ type: 'error', message: errorMessage(e) });
    } finally {
      this.post({ type: 'busy', what: null });
    }
  }

  protected async onMessage(raw: unknown): Promise<void> {
    const m = parseCompareMessage(raw);
    if (!m) return;
    switch (m.type) {
      case 'ready': {
        const queued = this.becomeReady();
        if (this.model) queued.push({ type: 'model', model: this.model });
        for (const q of queued) this.send(q);
        return;
      }
      case 'openQuestion': {
        const s = this.sides[m.side] ?? this.sides[0];
        return this.deps.openQuestion({ runId: s.runId, step: m.step, questionId: m.questionId });
      }
      case 'openDashboard':
        return this.deps.openDashboard((this.sides[m.side] ?? this.sides[0]).runId);
      case 'compareWith':
        return void vscode.commands.executeCommand('consensusLens.compareRuns', this.sides[0].runId);
      case 'openPair': {
        const d = this.model?.disagreements[m.index];
        if (!d || this.sides.length < 2) return;
        const params = this.deps.configuredParams();
        const side = async (k: 0 | 1) => {
          const s = this.sides[k];
          const key = { runId: s.runId, step: k === 0 ? d.stepA : d.stepB, questionId: d.questionId };
          const g = await this.deps.store.get(key);
          const ctx = outcomeContext(await this.deps.store.outcomeHistory(key), params);
          return g ? pairSide(this.label(s.runId), s.operator, buildView(g, params, s.operator, ctx)) : null;
        };
        return this.post({ type: 'pair', index: m.index, sides: [await side(0), await side(1)] });
      }
    }
  }

  /** Only the newest model and busy state matter while the webview loads. */
  protected supersedes(queued: CompareHostMessage, next: CompareHostMessage): boolean {
    return queued.type === next.type;
  }

  protected override onDispose(): void {
    RunView.views.delete(this);
    this.job.dispose();
  }
}

async function pickOperator(title: string, preset: OperatorId, exclude?: OperatorId): Promise<OperatorId | undefined> {
  // Any operator of either family against any other: each listed with its family (consensus or confidence).
  const items = OPERATOR_IDS.filter((o) => o !== exclude).map((o) => ({ label: o, description: `${OPERATOR_LABELS[o]} · ${OPERATOR_FAMILIES[o]}${o === preset ? ' (configured)' : ''}` }));
  const p = await vscode.window.showQuickPick(items, { title });
  return p?.label as OperatorId | undefined;
}

/**
 * consensusLens.compareRuns: (run A, run B) from the explorer (a run node, or two selected), or
 * picked; the same run twice asks for a second operator.
 */
async function compareCommand(deps: CompareDeps, extensionUri: vscode.Uri, arg?: unknown, second?: unknown): Promise<RunView | undefined> {
  const idOf = (x: unknown): string | undefined => (typeof x === 'string' ? x : x && typeof x === 'object' && (x as { kind?: string }).kind === 'run' ? (x as { runId: string }).runId : undefined);
  const runs = [...deps.store.runs.values()];
  // The tree passes (clicked node, selected nodes) when several are selected.
  const selected = Array.isArray(second) ? second.map(idOf).filter((x): x is string => !!x) : [];
  let a: string | undefined = selected[0] ?? idOf(arg);
  let b: string | undefined = selected[1] ?? (typeof second === 'string' ? second : undefined);
  const configured = deps.configuredOperator();
  let opA: OperatorId = configured;
  let opB: OperatorId = configured;
  if (!a) {
    if (!runs.length) return void vscode.window.showWarningMessage('Consensus Lens: open a run first (Follow Run…).');
    const p = await vscode.window.showQuickPick(
      runs.map((r) => ({ label: r.label, description: r.path, id: r.id })),
      { title: 'Compare: the first run (A)' },
    );
    a = p?.id;
    if (!a) return;
  }
  if (!b) {
    const SAME = '$same';
    const p = await vscode.window.showQuickPick(
      [
        ...runs.filter((r) => r.id !== a).map((r) => ({ label: r.label, description: r.path, id: r.id })),
        { label: `${deps.store.runs.get(a)?.label ?? a} with another operator`, description: 'two operators on one run', id: SAME },
      ],
      { title: `Compare ${deps.store.runs.get(a)?.label ?? a} with…` },
    );
    if (!p) return;
    b = p.id === SAME ? a : p.id;
  }
  if (a === b) {
    const o1 = await pickOperator('Compare: the operator of side A', configured);
    if (!o1) return;
    const o2 = await pickOperator('Compare: the operator of side B', configured, o1);
    if (!o2) return;
    opA = o1;
    opB = o2;
  }
  const panel = vscode.window.createWebviewPanel(
    COMPARE_VIEW_TYPE,
    'Compare Runs',
    { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
    { enableScripts: true, retainContextWhenHidden: false },
  );
  const sides = [
    { runId: a as string, operator: opA },
    { runId: b as string, operator: opB },
  ];
  return new RunView(panel, extensionUri, deps, sides);
}

/** The read-only custom editor: a log file opened as a run. */
class LogFileEditor implements vscode.CustomReadonlyEditorProvider {
  constructor(
    private readonly deps: CompareDeps,
    private readonly extensionUri: vscode.Uri,
  ) {}

  openCustomDocument(uri: vscode.Uri): vscode.CustomDocument {
    return { uri, dispose: () => {} };
  }

  async resolveCustomEditor(doc: vscode.CustomDocument, panel: vscode.WebviewPanel): Promise<void> {
    // A file that is not a log is refused with the reader's reason (the CLI's), before it is
    // followed: no run of "0 steps" joins the explorer, and the runs already open stay as they are.
    const why = doc.uri.scheme === 'file' ? await whyNotARun(doc.uri.fsPath) : `${doc.uri.toString()}: not a file on disk`;
    const runId = why === null ? await this.deps.openRun(doc.uri.fsPath) : undefined;
    if (!runId) {
      panel.webview.options = { enableScripts: false };
      panel.webview.html = refusalHtml(why ?? `${doc.uri.fsPath}: could not be opened as a run`);
      return;
    }
    new RunView(panel, this.extensionUri, this.deps, [{ runId, operator: this.deps.configuredOperator() }]);
  }
}

/** The custom editor's page for a file that is not a run: the reason, as text (no script). */
function refusalHtml(why: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"></head><body style="color: var(--vscode-foreground); font-family: var(--vscode-font-family)"><p id="not-a-run" style="padding: 1em">Consensus Lens cannot open this file as a run: ${escapeHtml(why)}</p></body></html>`;
}

export function registerCompare(context: vscode.ExtensionContext, deps: CompareDeps): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('consensusLens.compareRuns', (arg?: unknown, second?: unknown) => compareCommand(deps, context.extensionUri, arg, second)),
    vscode.commands.registerCommand('consensusLens.openLogAsRun', async (uri?: vscode.Uri) => {
      let target = uri instanceof vscode.Uri ? uri : vscode.window.activeTextEditor?.document.uri;
      if (target?.scheme !== 'file' || !/\.(jsonl|parquet)$/i.test(target.path)) {
        // Pick one of the workspace's log files (bounded: the first 500).
        const files = await vscode.workspace.findFiles('**/*.{jsonl,parquet}', '**/node_modules/**', 500);
        const p = await vscode.window.showQuickPick(
          files.map((f) => ({ label: vscode.workspace.asRelativePath(f), uri: f })).sort((x, y) => x.label.localeCompare(y.label)),
          { title: 'Consensus Lens: open a log file as a run', matchOnDescription: true },
        );
        target = p?.uri;
      }
      if (!target) return;
      // Refused here, before an editor opens: whatever is open stays in front.
      const why = await whyNotARun(target.fsPath);
      if (why !== null) return void vscode.window.showErrorMessage(`Consensus Lens cannot open this file as a run: ${why}`);
      await vscode.commands.executeCommand('vscode.openWith', target, LOG_EDITOR_VIEW_TYPE);
    }),
    vscode.window.registerCustomEditorProvider(LOG_EDITOR_VIEW_TYPE, new LogFileEditor(deps, context.extensionUri), {
      supportsMultipleEditorsPerDocument: true,
      webviewOptions: { retainContextWhenHidden: false },
    }),
    { dispose: () => RunView.all.forEach((v) => v.dispose()) },
  );
}
