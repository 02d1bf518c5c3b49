// The run-wide what-if commands in VS Code: Re-score Run… (operator and parameters in
// one quick input prefilled with the current values, validated against each parameter's range;
// re-scored in worker threads with a cancellable progress notification), the list of flipped
// questions (each opens its consensus panel), and export of the last result as JSONL or CSV.
// A cancelled re-score never replaces the previous result.
import * as vscode from 'vscode';
import { writeFile } from 'node:fs/promises';
import { OPERATOR_IDS, type OperatorId, diffsToCsv, diffsToJsonl } from '../../engine';
import type { QuestionKey, SensitivityRange } from '../../protocol/messages';
import { sensitivityRange } from './sensitivity-range';
import type { DashWhatIf } from '../../protocol/dashboard-messages';
import { sanitizeParams } from '../slider-params';
import { parseWhatIfText, prefillText, validateRescoreText } from './rescore-text';
import type { RunEntry, RunStore } from '../model/run-store';
import { questionItem, storeSource } from '../model/run-source';
import { flipDescription } from '../format';
import { WhatIfEngine, type WhatIfReport } from '../workers/runtime';

export interface WhatIfDeps {
  store: RunStore;
  configuredOperator(): OperatorId | undefined;
  configuredParams(): Record<string, number>;
  pickRun(): Promise<string | undefined>;
  openQuestion(key: QuestionKey): void;
  openDashboard(runId: string): void;
  log: vscode.LogOutputChannel;
}

export function whatIfSummary(r: WhatIfReport): DashWhatIf {
  const hist = (h: WhatIfReport['stats']['rewardShift']) => ({ lo: h.lo, hi: h.hi, counts: h.counts, n: h.n });
  return {
    runId: r.runId,
    operator: r.operator,
    changed: r.changed,
    groups: r.groups,
    rollouts: r.rollouts,
    flipsCount: r.flips.length,
    signChanges: r.signChanges,
    meanGateBefore: r.meanGateBefore,
    meanGateAfter: r.meanGateAfter,
    accuracyBefore: r.accuracyBefore,
    accuracyAfter: r.accuracyAfter,
    withTruth: r.withTruth,
    steps: r.steps.map(({ withTruth: _w, ...s }) => s),
    flips: r.flips.slice(0, 1000),
    histograms: { rewardShift: hist(r.stats.rewardShift), advantageShift: hist(r.stats.advantageShift), gateBefore: hist(r.stats.gateBefore), gateAfter: hist(r.stats.gateAfter) },
    ms: r.ms,
    at: r.at,
  };
}

export class WhatIfController implements vscode.Disposable {
  // CONSENSUS_LENS_TEST_WHATIF_DELAY_MS (e2e only): a pause per chunk of 2 groups, so a re-score of
  // a small run lasts long enough to be cancelled by a click.
  private static readonly testDelay = Number(process.env.CONSENSUS_LENS_TEST_WHATIF_DELAY_MS) || 0;
  readonly engine = new WhatIfEngine({
    workers: 2,
    maxGroupSize: () => {
      const v = vscode.workspace.getConfiguration('consensusLens').get<number>('maxGroupSize');
      return typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : undefined;
    },
    ...(WhatIfController.testDelay > 0 ? { chunk: 2, delayMs: WhatIfController.testDelay } : {}),
  });
  /** The last COMPLETED re-score per run. */
  readonly last = new Map<string, WhatIfReport>();
  private readonly changed = new vscode.EventEmitter<string>();
  readonly onDidChange = this.changed.event;
  private running = false;

  constructor(private readonly deps: WhatIfDeps) {}

  private run(runId: string): RunEntry | undefined {
    return this.deps.store.runs.get(runId);
  }

  /** consensusLens.rescoreRun. `given` params skip the input (tests, other commands). */
  async rescoreCommand(arg?: { kind?: string; runId?: string } | string, given?: Record<string, number>, givenOperator?: OperatorId): Promise<WhatIfReport | undefined> {
    const runId = typeof arg === 'string' ? arg : arg?.kind === 'run' ? arg.runId : await this.deps.pickRun();
    const run = runId ? this.run(runId) : undefined;
    if (!run) return undefined;
    const base = this.deps.configuredParams();
    const configured = this.deps.configuredOperator() ?? 'majority';
    let operator = givenOperator ?? configured;
    let baseline: OperatorId | null = null;
    let params = given;
    if (!params) {
      const text = await vscode.window.showInputBox({
        title: `Re-score ${run.label}`,
        prompt: `An operator (${OPERATOR_IDS.join(', ')}) and the parameters to change, e.g. "core kappa=0.5". The baseline is the same operator at the configured parameters, or "vs OPERATOR" (e.g. "vs majority": what the run trained on). Other parameters keep their configured values.`,
        value: configured === 'majority' ? `${prefillText('core', base)} vs majority` : prefillText(operator, base),
        placeHolder: 'core kappa=0.5 vs majority',
        validateInput: validateRescoreText,
      });
      if (text === undefined) return undefined;
      const parsed = parseWhatIfText(text) ?? { operator: null, baseline: null, params: {} };
      params = parsed.params;
      if (parsed.operator) operator = parsed.operator;
      baseline = parsed.baseline;
    }
    const next = sanitizeParams(params, base);
    if (this.running) {
      void vscode.window.showWarningMessage('Consensus Lens: a re-score is already running.');
      return undefined;
    }
    this.running = true;
    let report: WhatIfReport;
    try {
      report = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Re-scoring ${run.label} (${operator})`, cancellable: true }, (progress, token) => {
        let last = 0;
        return this.engine.rescore(storeSource(this.deps.store, run), { operator: baseline ?? operator, params: base }, { operator, params: next }, {
          cancelled: () => token.isCancellationRequested,
          progress: (done, total) => {
            const pct = total ? (100 * done) / total : 100;
            progress.report({ message: `${done}/${total} groups`, increment: pct - last });
            last = pct;
          },
        });
      });
    } finally {
      this.running = false;
    }
    const r = report;
    const log = this.deps.log;
    log.info(`re-scored ${run.label} with ${operator} ${JSON.stringify(r.changed)} against ${r.before.operator} at the configured parameters: ${r.groups} groups${r.failed.length ? ` (${r.failed.length} could not be re-scored)` : ''}, ${r.flips.length} label flips, ${r.signChanges} advantage sign changes, ${r.ms.toFixed(0)} ms${r.cancelled ? ' (cancelled)' : ''}`);
    if (r.cancelled) {
      void vscode.window.showInformationMessage(`Consensus Lens: re-score cancelled after ${r.groups} groups; the previous result is kept.`);
      return r;
    }
    this.last.set(run.id, r);
    this.changed.fire(run.id);
    for (const f of r.failed.slice(0, 200)) log.warn(`  step ${f.step} ${f.questionId}: not re-scored: ${f.message}`);
    if (r.failed.length) void vscode.window.showWarningMessage(`Consensus Lens: ${r.failed.length} group(s) of ${run.label} could not be re-scored (e.g. step ${r.failed[0].step}, ${r.failed[0].questionId}: ${r.failed[0].message.slice(0, 200)}); see the Consensus Lens output.`);
    for (const f of r.flips.slice(0, 200)) log.info(`  ${f.questionId} ${flipDescription(f)}`);
    const acc = r.accuracyBefore !== null && r.accuracyAfter !== null ? `; pseudo-label accuracy ${(100 * r.accuracyBefore).toFixed(1)}% → ${(100 * r.accuracyAfter).toFixed(1)}% (diagnostic)` : '';
    void vscode.window
      .showInformationMessage(
        `Consensus Lens: ${r.flips.length} of ${r.groups} pseudo-labels flip under ${r.operator}${r.before.operator !== r.operator ? ` (vs ${r.before.operator})` : ''}; ${r.signChanges} roll-outs change advantage sign; mean gate ${r.meanGateBefore.toFixed(3)} → ${r.meanGateAfter.toFixed(3)}${acc}.`,
        'Show Flips',
        'Open Dashboard',
        'Export…',
      )
      .then((c) => {
        if (c === 'Show Flips') void this.showFlips(run.id);
        else if (c === 'Open Dashboard') this.deps.openDashboard(run.id);
        else if (c === 'Export…') void this.exportLast(run.id);
      });
    return r;
  }

  /** consensusLens.showRescoreFlips: the flipped questions of the last re-score; picking one opens its panel. */
  async showFlips(runId?: string): Promise<void> {
    const id = runId ?? [...this.last.keys()].pop();
    const r = id ? this.last.get(id) : undefined;
    if (!r || !id) return void vscode.window.showInformationMessage('Consensus Lens: re-score a run first.');
    if (!r.flips.length) return void vscode.window.showInformationMessage('Consensus Lens: no pseudo-label flips in the last re-score.');
    const items = r.flips.map((f) => ({ label: f.questionId, description: flipDescription(f), f }));
    const pick = await vscode.window.showQuickPick(items, { title: `${r.flips.length} pseudo-labels flip under ${r.operator} ${JSON.stringify(r.changed)}`, matchOnDescription: true });
    if (pick) this.deps.openQuestion({ runId: id, step: pick.f.step, questionId: pick.f.questionId });
  }

  /** consensusLens.exportRescore: writes the last re-score (one line per group) as JSONL or CSV. */
  async exportLast(runId?: string, target?: vscode.Uri): Promise<vscode.Uri | undefined> {
    const id = runId ?? [...this.last.keys()].pop();
    const r = id ? this.last.get(id) : undefined;
    if (!r) return void vscode.window.showInformationMessage('Consensus Lens: re-score a run first.');
    const uri =
      target ??
      (await vscode.window.showSaveDialog({
        title: 'Export the re-score',
        defaultUri: vscode.Uri.file(`${this.run(r.runId)?.path ?? process.cwd()}/rescore-${r.operator}.jsonl`),
        filters: { 'JSON Lines': ['jsonl'], CSV: ['csv'] },
      }));
    if (!uri) return undefined;
    const csv = uri.fsPath.toLowerCase().endsWith('.csv');
    const header = { run: r.runId, operator: r.operator, before: r.before.params, after: r.after.params, changed: r.changed, groups: r.groups, flips: r.flips.length, sign_changes: r.signChanges, accuracy_before: r.accuracyBefore, accuracy_after: r.accuracyAfter };
    await writeFile(uri.fsPath, csv ? diffsToCsv(r.diffs) : diffsToJsonl(r.diffs, header));
    void vscode.window.showInformationMessage(`Consensus Lens: exported ${r.diffs.length} groups to ${uri.fsPath}.`);
    return uri;
  }

  /** The panel's κ/τ intervals for a question (in a worker thread). */
  async sensitivity(key: QuestionKey, params: Record<string, number>): Promise<SensitivityRange[] | null> {
    // A question the store cannot prepare (too large, unreadable) has no intervals. One it has
    // prepared for the panel is held by the worker that prepared it: the request names it by key.
    if (!(this.deps.store.cached(key) ?? (await this.deps.store.get(key)))) return null;
    const q = questionItem(this.deps.store, key);
    if (!q) return null;
    const r = await this.engine.sensitivity(q.runId, q.item, params);
    return [sensitivityRange(r.kappa), sensitivityRange(r.tau)];
  }

  summary(runId: string): DashWhatIf | null {
    const r = this.last.get(runId);
    return r ? whatIfSummary(r) : null;
  }

  dispose(): void {
    this.changed.dispose();
    void this.engine.dispose();
  }
}
