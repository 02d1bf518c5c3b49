// The run dashboard as a feature: consensusLens.showDashboard and the panel's restore after a reload.
import * as vscode from 'vscode';
import type { QuestionKey } from '../../protocol/messages';
import type { RunStore } from '../store';
import type { WhatIfController } from '../whatif';
import type { Node } from '../explorer/tree';
import { configuredOperator, configuredParams } from '../settings';
import { DashboardPanel, DASHBOARD_VIEW_TYPE, type DashboardHost } from './panel';

export interface DashboardHooks {
  /** The run to show when the command names none. */
  defaultRun(): string | undefined;
  openQuestion(key: QuestionKey): void;
  log(message: string): void;
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
