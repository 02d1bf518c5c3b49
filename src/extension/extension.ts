import * as vscode from 'vscode';
import { ConsensusPanel, PANEL_VIEW_TYPE, type PanelHost } from './panel';
import { SLIDER_PARAMS, defaultParams } from './params';

export function activate(context: vscode.ExtensionContext): void {
  const out = vscode.window.createOutputChannel('Consensus Lens', { log: true });
  const host: PanelHost = {
    paramSpecs: () => SLIDER_PARAMS,
    operators: () => ['majority', 'cisc', 'ec', 'core', 't3rl', 'msttrl'],
    defaultParams,
    view: () => { throw new Error('no run'); },
    openRollout: async () => {},
    revealInLog: async () => {},
    firstQuestion: () => undefined,
    log: (m) => out.info(m),
  };
  context.subscriptions.push(
    out,
    vscode.commands.registerCommand('consensusLens.showConsensus', () => ConsensusPanel.show(context.extensionUri, host, undefined)),
    vscode.window.registerWebviewPanelSerializer(PANEL_VIEW_TYPE, {
      deserializeWebviewPanel: async (panel, state) => { ConsensusPanel.revive(panel, context.extensionUri, host, state); },
    }),
  );
}

export function deactivate(): void {}
