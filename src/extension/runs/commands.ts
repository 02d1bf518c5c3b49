// Open Run…, Close Run and Refresh Runs.
import * as vscode from 'vscode';
import type { RunStore } from '../model/run-store';
import type { WhatIfController } from '../whatif/whatif-controller';
import type { Node } from '../explorer/tree';
import type { RunDiscovery } from './discovery';
import { whyNotARun } from './recognise';
import { dumpOf } from '../convert/converter';

export function registerRunCommands(store: RunStore, discovery: RunDiscovery, whatIf: WhatIfController, picked: (runId: string) => void): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.commands.registerCommand('consensusLens.openRun', async (arg?: vscode.Uri | string) => {
      let path = typeof arg === 'string' ? arg : arg instanceof vscode.Uri ? arg.fsPath : undefined;
      if (!path) {
        const chosen = await vscode.window.showOpenDialog({
          canSelectFiles: true,
          canSelectFolders: true,
          canSelectMany: false,
          openLabel: 'Follow Run',
          title: 'Consensus Lens: pick a run folder or a log file',
          filters: { 'Run logs': ['jsonl', 'parquet'], 'Trackio database, slime dump (converted)': ['db', 'pt'], 'All files': ['*'] },
        });
        path = chosen?.[0]?.fsPath;
      }
      if (!path) return;
      // A Trackio database or a slime .pt file is converted first (src/extension/convert/), under its own rules.
      if (/\.(db|pt)$/i.test(path) && dumpOf(path)) return vscode.commands.executeCommand<string | undefined>('consensusLens.openDump', path);
      // A file that is not a log is refused with the reader's reason (src/extension/runs/recognise.ts):
      // no empty run joins the explorer.
      const why = await whyNotARun(discovery.resolvePath(path));
      if (why !== null) return void vscode.window.showErrorMessage(`Consensus Lens cannot open this file as a run: ${why}`);
      const run = discovery.follow(path, 'opened');
      discovery.primary = run.id;
      picked(run.id);
      await vscode.commands.executeCommand('workbench.view.extension.consensusLens');
      return run.id;
    }),
    vscode.commands.registerCommand('consensusLens.closeRun', (n?: Node) => {
      if (n?.kind !== 'run') return;
      void whatIf.engine.forget(n.runId);
      store.remove(n.runId);
    }),
    // Look for new runs in the workspace and the settings, and re-read the followed ones.
    vscode.commands.registerCommand('consensusLens.refresh', async () => {
      await discovery.followConfigured();
      await Promise.all([...store.runs.values()].map((r) => r.index?.refresh()));
    }),
  );
}
