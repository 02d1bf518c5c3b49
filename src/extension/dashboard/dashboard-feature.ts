// The run dashboard as a feature: consensusLens.showDashboard, consensusLens.openSweepResult (a
// cluster sweep's result file in the sweep view) and the panel's restore after a reload.
import { existsSync } from 'node:fs';
import { errorMessage } from '../../util/errors';
import { readFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import type { QuestionKey } from '../../protocol/messages';
import type { RunStore } from '../model/run-store';
import type { WhatIfController } from '../whatif/whatif-controller';
import type { Node } from '../explorer/tree';
import { configuredOperator, configuredParams } from '../settings';
import { DashboardPanel, DASHBOARD_VIEW_TYPE, type DashboardHost } from './dashboard-panel';
import { parseSweepFile } from './sweep-file';

export interface DashboardHooks {
  /** The run to show when the command names none. */
  defaultRun(): string | undefined;
  openQuestion(key: QuestionKey): void;
  log(message: string): void;
  /** Follows a run (a folder or a file); returns its id. */
  followRun(path: string): string;
}

export class DashboardFeature implements vscode.Disposable {
  private readonly host: DashboardHost;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(context: vscode.ExtensionContext, store: RunStore, whatIf: WhatIfController, hooks: DashboardHooks) {
    this.host = { store, whatIf, configuredOperator, configuredParams, openQuestion: hooks.openQuestion, log: hooks.log };
    this.disposables.push(
      vscode.commands.registerCommand('consensusLens.showDashboard', (arg?: Node | string) => {
        const runId = typeof arg === 'string' ? arg : arg?.kind === 'run' ? arg.runId : hooks.defaultRun();
        DashboardPanel.show(context.extensionUri, this.host, runId);
      }),
      // python -m consensus_lens.ray sweep … --output FILE: the run it names, followed, with the
      // file's κ × τ grid in the sweep view (docs/scale.md#seeing-the-result).
      vscode.commands.registerCommand('consensusLens.openSweepResult', async (arg?: vscode.Uri | string) => {
        let file = typeof arg === 'string' ? arg : arg instanceof vscode.Uri ? arg.fsPath : undefined;
        if (!file)
          file = (
            await vscode.window.showOpenDialog({
              canSelectFiles: true,
              canSelectMany: false,
              openLabel: 'Show in Dashboard',
              title: 'Consensus Lens: a cluster sweep result',
              filters: { 'Sweep results': ['jsonl', 'json'], 'All files': ['*'] },
            })
          )?.[0]?.fsPath;
        if (!file) return;
        try {
          const result = parseSweepFile(await readFile(file, 'utf8'), file);
          if (!existsSync(result.run)) throw new Error(`${file} is the sweep of ${result.run}, which is not on this machine (open the file where the run is mounted at that path)`);
          const runId = hooks.followRun(result.run);
          DashboardPanel.show(context.extensionUri, this.host, runId).showSweep({ ...result.sweep, runId });
          return runId;
        } catch (e) {
          void vscode.window.showErrorMessage(`Consensus Lens: ${errorMessage(e)}`);
        }
      }),
      vscode.window.registerWebviewPanelSerializer(DASHBOARD_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel) => {
          DashboardPanel.revive(panel, context.extensionUri, this.host);
        },
      }),
      { dispose: () => DashboardPanel.instance?.dispose() },
    );
  }

  get panel(): DashboardPanel | undefined {
    return DashboardPanel.instance;
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
