// The run-wide what-if commands (their work is whatif-controller.ts's WhatIfController): Re-score
// Run…, the flips of the last re-score, and its export. A finished re-score is offered to the
// training launcher as "the last what-if".
import * as vscode from 'vscode';
import type { OperatorId } from '../../engine';
import type { WhatIfController } from './whatif-controller';
import type { Node } from '../explorer/tree';
import type { WhatIf } from '../training/training-commands';

export function registerWhatIfCommands(whatIf: WhatIfController, noteWhatIf: (w: WhatIf) => void): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.commands.registerCommand('consensusLens.rescoreRun', async (arg?: Node | string, given?: Record<string, number>, givenOperator?: OperatorId) => {
      const report = await whatIf.rescoreCommand(arg, given, givenOperator);
      if (report && !report.cancelled) noteWhatIf({ operator: report.operator, params: report.after.params });
      return report;
    }),
    vscode.commands.registerCommand('consensusLens.showRescoreFlips', (runId?: string) => whatIf.showFlips(typeof runId === 'string' ? runId : undefined)),
    vscode.commands.registerCommand('consensusLens.exportRescore', (runId?: string, target?: string) =>
      whatIf.exportLast(typeof runId === 'string' ? runId : undefined, typeof target === 'string' ? vscode.Uri.file(target) : undefined),
    ),
  );
}
